// Where a certificate lives (route 1): profiles estimated over the model's own BPE tokens, a model
// whose W_e starts as that reference, its step-0 embedding re-profiled to the published α̂, τ̂, and
// a permuted grade vector certified from the model's tensors to its own (different) number.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/data/profile_estimation.h"
#include "engine/data/splits.h"
#include "engine/grading/certify.h"
#include "engine/grading/cone.h"
#include "engine/grading/ladder.h"
#include "engine/grading/profiles.h"
#include "engine/grading/reference_table.h"
#include "engine/io/error.h"
#include "engine/model/checkpoint_tensors.h"
#include "engine/model/gpt.h"
#include "engine/train/embedding_reference.h"
#include "engine/train/model_grades.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;
using namespace gllm;

namespace {

// A tagged corpus in Brown's format whose words carry level structure: determiners, adjectives,
// nouns, verbs, prepositions, negation and adverbs drawn from a seeded stream.
void write_brown_like(const std::string& root, int documents) {
  fs::create_directories(root);
  const char* det[] = {"the/at", "a/at", "this/dt", "every/at"};
  const char* adj[] = {"old/jj", "green/jj", "quiet/jj", "large/jj", "early/jj", "bright/jj"};
  const char* noun[] = {"jury/nn",   "city/nn",   "farmer/nn", "river/nn",   "letter/nn",
                        "school/nn", "market/nn", "garden/nn", "council/nn", "station/nn"};
  const char* verb[] = {"said/vbd",    "found/vbd",   "opened/vbd",
                        "carried/vbd", "watched/vbd", "built/vbd"};
  const char* prep[] = {"in/in", "near/in", "with/in", "from/in"};
  SplitMix64 rng(7);
  auto pick = [&](const char* const* list, int n) { return std::string(list[rng.below(n)]); };
  const std::string genres = "abcdefghjklmnpr";
  for (int d = 0; d < documents; ++d) {
    std::string name =
        std::string("c") + genres[d % genres.size()] + (d < 9 ? "0" : "") + std::to_string(d + 1);
    std::ofstream out(root + "/" + name);
    for (int s = 0; s < 14; ++s) {
      out << "\n\n\t" << pick(det, 4) << " " << pick(adj, 6) << " " << pick(noun, 10) << " ";
      if (rng.below(4) == 0) out << "did/dod not/* ";
      out << pick(verb, 6) << " " << pick(det, 4) << " " << pick(noun, 10) << " " << pick(prep, 4)
          << " " << pick(det, 4) << " " << pick(noun, 10);
      if (rng.below(3) == 0) out << " quickly/rb";
      out << " ./.\n";
    }
  }
}

}  // namespace

class TestTrainCertificateCoordinates : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  std::string dir_;
  DataConfig data_;

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  RunConfig armConfig(const std::string& arm) const {
    RunConfig c = test::tiny_model(2, 16, 2, 0, 32);
    c.data = data_;
    c.grading.attention = false;
    c.grading.mlge = true;
    c.grading.levels = 4;
    c.grading.level_grades_source = "ladder";
    c.grading.ladder_file = path("ladder.json");
    c.grading.ladder_arm = arm;
    c.grading.profiles_file = path("profiles.json");
    c.grading.basis_trainable = false;
    c.grading.grades_trainable = false;
    c.model.wte_init = "reference";
    c.train.device = "cpu";
    return RunConfig::from_json(c.to_json());
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    dir_ = tmp_.path().toStdString();
    ::setenv("GLLM_DATA", path("cache").c_str(), 1);
    write_brown_like(path("brown"), 30);
    data_.corpus = "brown";
    data_.corpus_path = path("brown");
    data_.vocab_size = 300;
    data_.val_fraction = 0.25;
    data_.heldout_fraction = 0.25;
    const Dataset ds = open_dataset(data_);
    const Corpus corpus = read_corpus(data_);
    ProfileOptions o;
    o.reference = "token_ppmi";
    o.d = 16;
    o.levels = 4;
    o.min_count = 2;
    o.contexts = 200;
    o.bootstrap = 40;
    o.threads = 1;
    ProfileResult r = estimate_profiles(corpus, ds.splits, o, &ds.tokenizer, ds.shard.get());
    QVERIFY(r.reference.vectors.size() > 0);
    QCOMPARE(r.reference.vectors.rows(), int64_t(ds.tokenizer.vocab_size()));
    grading::save_token_reference(path("profiles.reference.safetensors"), r.reference);
    r.file.reference["file"] = "profiles.reference.safetensors";
    grading::save_profiles_file(path("profiles.json"), r.file);
    grading::LadderOptions lo;
    lo.lambda = std::exp(1.0 / 8);
    lo.clip = 2;
    lo.seed = 5;
    grading::save_ladder_file(path("ladder.json"), grading::build_ladder(r.file, lo));
  }

  void modelStartsInTheReference() {
    const RunConfig c = armConfig("uniform");
    const Dataset ds = open_dataset(data_);
    GPT model = build_model(c, ds.tokenizer.vocab_size(), 42, ds.tokenizer.hash());
    const auto ref = grading::load_token_reference(path("profiles.reference.safetensors"));
    torch::Tensor wte;
    for (const auto& [name, t] : model->state_tensors())
      if (name == "transformer.wte.weight") wte = t.contiguous();
    QVERIFY(wte.defined());
    const float* w = wte.data_ptr<float>();
    double maxdiff = 0;
    for (int64_t i = 0; i < ref.vectors.rows(); ++i)
      for (int64_t j = 0; j < ref.vectors.cols(); ++j)
        maxdiff = std::max(maxdiff, std::abs(w[i * ref.vectors.cols() + j] - ref.vectors(i, j)));
    QCOMPARE(maxdiff, 0.0);  // the table itself, float for float
    // RMS 1: the N(0, 1) initialisation's scale.
    const double rms = std::sqrt(wte.square().mean().item<double>());
    QVERIFY2(std::abs(rms - 1) < 1e-4, qPrintable(QString::number(rms)));
  }

  void stepZeroEmbeddingReprofilesToThePublishedProfiles() {
    // The uniform arm's step-0 checkpoint, read back as the reference (route 2's reader), gives
    // the published α̂ and τ̂: the certificate is about the model's own coordinates. (Before, W_e
    // was N(0, 1) and shared nothing with the PPMI space but the coordinate index.)
    const RunConfig c = armConfig("uniform");
    const Dataset ds = open_dataset(data_);
    GPT model = build_model(c, ds.tokenizer.vocab_size(), 42, ds.tokenizer.hash());
    TensorMap weights;
    for (const auto& [name, t] : model->state_tensors()) weights[name] = t.detach();
    fs::create_directories(path("run/checkpoints"));
    const std::string ckpt = path("step0.safetensors");
    write_tensor_file(ckpt, weights,
                      {{"format", "gllm-model-1"}, {"config", c.to_json().dump()}, {"step", "0"}});
    grading::TokenReference read = checkpoint_reference(ckpt);
    QCOMPARE(
        read.digest(),
        grading::load_profiles_file(path("profiles.json")).reference["digest"].get<std::string>());
    ProfileOptions o;
    o.reference = "wte";
    o.token_reference = &read;
    o.levels = 4;
    o.min_count = 2;
    o.contexts = 200;
    o.bootstrap = 40;
    o.threads = 1;
    const Corpus corpus = read_corpus(data_);
    const ProfileResult again =
        estimate_profiles(corpus, ds.splits, o, &ds.tokenizer, ds.shard.get());
    const auto published = grading::load_profiles_file(path("profiles.json"));
    for (size_t j = 0; j < published.profiles.alpha.size(); ++j) {
      QVERIFY(std::abs(again.file.profiles.alpha[j] - published.profiles.alpha[j]) < 1e-9);
      QVERIFY(std::abs(again.file.profiles.tau[j] - published.profiles.tau[j]) < 1e-9);
    }
  }

  void permutedGradesGiveTheirOwnCertificate() {
    // Permute the educated arm's grades over coordinates: the model holds the permuted tensor,
    // and the certificate read back from it is the permuted vector's own ⟨πq, α̂−τ̂⟩.
    auto lad = grading::load_ladder_file(path("ladder.json"));
    const auto profiles = grading::load_profiles_file(path("profiles.json"));
    std::vector<double> q = lad.arm("educated").grades;
    std::vector<double> permuted(q.rbegin(), q.rend());
    for (auto& a : lad.arms)
      if (a.name == "educated") a.grades = permuted;
    grading::save_ladder_file(path("ladder-permuted.json"), lad);
    RunConfig c = armConfig("educated");
    c.grading.ladder_file = path("ladder-permuted.json");
    const auto m = model_grades_from_config(c, "permuted");
    grading::AnyProfiles ap;
    ap.kind = "embedding";
    ap.path = path("profiles.json");
    ap.embedding = profiles;
    const auto certs = grading::certify(m, {ap});
    QCOMPARE(certs.size(), size_t(1));
    QVERIFY(certs[0].certified);
    double expect = 0, original = 0;
    for (size_t j = 0; j < q.size(); ++j) {
      expect += permuted[j] * (profiles.profiles.alpha[j] - profiles.profiles.tau[j]);
      original += q[j] * (profiles.profiles.alpha[j] - profiles.profiles.tau[j]);
    }
    QVERIFY(std::abs(certs[0].certificate - expect) < 1e-6);
    QVERIFY2(std::abs(expect - original) > 1e-3,
             qPrintable(QString("%1 vs %2").arg(expect).arg(original)));
    QVERIFY(certs[0].has_heldout);  // held-out figures beside the fit ones
    QVERIFY(!certs[0].verdict.empty());
  }

  void ladderIsHonest() {
    const auto lad = grading::load_ladder_file(path("ladder.json"));
    int randoms = 0;
    for (const auto& a : lad.arms) {
      if (!a.available) continue;
      randoms += a.name.rfind("random", 0) == 0;
      QVERIFY(a.has_heldout);
      QVERIFY2(!a.interval_method.empty(), a.name.c_str());
      // Every interval holds its own estimate (bias-corrected where the percentile one misses).
      QVERIFY2(
          a.certificate_low <= a.certificate + 1e-12 && a.certificate <= a.certificate_high + 1e-12,
          a.name.c_str());
      QVERIFY2(a.lambda_q_low <= a.lambda_q + 1e-12 && a.lambda_q <= a.lambda_q_high + 1e-12,
               a.name.c_str());
      QVERIFY(a.certificate_heldout_low <= a.certificate_heldout + 1e-12 &&
              a.certificate_heldout <= a.certificate_heldout_high + 1e-12);
    }
    QCOMPARE(randoms, grading::kRandomDraws);
    QVERIFY(lad.arm("random").grades != lad.arm("random-2").grades);
    // The educated grades are fitted on the fit profiles: in-sample Λ is their minimum over the
    // box, so scoring them on held-out profiles cannot do better than the oracle fitted there.
    QVERIFY(lad.arm("educated").lambda_q <= lad.arm("oracle").lambda_q + 1e-9);
    QVERIFY(lad.arm("oracle").lambda_q_heldout <= lad.arm("educated").lambda_q_heldout + 1e-9);
    QVERIFY(lad.reference.is_object());
  }

  void mismatchedReferenceRefused() {
    // A table whose bytes are not the ones the profiles recorded is refused with the fix.
    auto ref = grading::load_token_reference(path("profiles.reference.safetensors"));
    ref.vectors(3, 2) += 1.0f;
    grading::save_token_reference(path("other.reference.safetensors"), ref);
    auto prof = grading::load_profiles_file(path("profiles.json"));
    prof.reference["file"] = "other.reference.safetensors";
    grading::save_profiles_file(path("profiles-other.json"), prof);
    RunConfig c = armConfig("uniform");
    c.grading.profiles_file = path("profiles-other.json");
    c.grading.mlge = false;
    c.grading.level_grades_source = "levels";
    c.grading.ladder_file.clear();
    c.grading.ladder_arm.clear();
    const Dataset ds = open_dataset(data_);
    const QString err = QString::fromStdString(
        test::error_of([&] { build_model(c, ds.tokenizer.vocab_size(), 1, ds.tokenizer.hash()); }));
    QVERIFY2(err.contains("not the one") && err.contains("gllm profiles"), qPrintable(err));
    // Another tokenizer: refused naming the tokenizer.
    RunConfig d = armConfig("uniform");
    const QString err2 = QString::fromStdString(
        test::error_of([&] { build_model(d, ds.tokenizer.vocab_size(), 1, "another-hash"); }));
    QVERIFY2(err2.contains("tokenizer"), qPrintable(err2));
  }
};

QTEST_APPLESS_MAIN(TestTrainCertificateCoordinates)
#include "test_train_certificate_coordinates.moc"
