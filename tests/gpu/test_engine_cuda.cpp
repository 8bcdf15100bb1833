// The GPU checks of `gllm check gpu` as a test: on a CUDA device every check must pass; without one
// the CUDA cases skip, and the checks still run once against the CPU as a self-test.
#include <torch/torch.h>

#include <QtTest>
#include <string>
#include <vector>

#include "engine/dist/device.h"
#include "engine/io/error.h"
#include "engine/train/gpu_check.h"

class TestEngineCuda : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  // The checks' own logic on the CPU: every comparison is CPU against CPU, so all must pass,
  // and the CUDA-only ones say they were skipped.
  void checks_self_test_on_cpu() {
    gllm::dist::GpuCheckOptions o;
    o.device = "cpu";
    auto rep = gllm::dist::run_gpu_checks(o);
    QVERIFY(rep.skipped.empty());
    std::vector<std::string> names;
    for (const auto& c : rep.checks) {
      qInfo("%s: %s %s", c.name.c_str(), c.status.c_str(), c.detail.c_str());
      QVERIFY2(c.status != "fail", (c.name + ": " + c.detail).c_str());
      names.push_back(c.name);
    }
    // The trainer's own three steps (bf16 autocast against fp32) and the fresh-weights forward
    // run on the CPU as well; only the CUDA allocator's peak is left to a device.
    const std::vector<std::string> expected{
        "forward_backward_vs_cpu", "bf16_autocast_loss",  "compile_to_standard",
        "sdpa_vs_masked_softmax",  "trainer_step_vs_cpu", "forward_sees_updated_weights",
        "cuda_peak_memory"};
    QCOMPARE(names, expected);
    QCOMPARE(rep.checks.back().status, std::string("skipped"));
    QCOMPARE(rep.checks[4].status, std::string("pass"));
    QCOMPARE(rep.checks[5].status, std::string("pass"));
    QVERIFY(rep.to_json()["passed"].get<bool>());
  }

  void device_selection() {
    QCOMPARE(gllm::dist::select_device("cpu").type(), torch::kCPU);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::dist::select_device("tpu"));
    if (gllm::dist::cuda_available()) {
      QVERIFY(gllm::dist::select_device("auto").is_cuda());
      QVERIFY(gllm::dist::select_device("cuda", 0).is_cuda());
    } else {
      QCOMPARE(gllm::dist::select_device("auto").type(), torch::kCPU);
      try {
        gllm::dist::select_device("cuda");
        QFAIL("cuda without a device must throw");
      } catch (const gllm::Error& e) {
        QVERIFY2(std::string(e.what()).find("set train.device") != std::string::npos, e.what());
      }
    }
    // bf16 autocast is a scope on the CPU too (the trainer's CPU bf16 runs): on inside, off after.
    auto a = torch::randn({8, 8}), b = torch::randn({8, 8});
    {
      gllm::dist::AutocastScope cpu(torch::Device(torch::kCPU), "bf16");
      QVERIFY(cpu.active());
      QCOMPARE(torch::matmul(a, b).scalar_type(), torch::kBFloat16);
    }
    QVERIFY(!gllm::dist::autocast_active(torch::Device(torch::kCPU)));
    QCOMPARE(torch::matmul(a, b).scalar_type(), torch::kFloat32);
    gllm::dist::AutocastScope fp32(torch::Device(torch::kCPU), "fp32");
    QVERIFY(!fp32.active());
  }

  void cuda_checks() {
    if (!gllm::dist::cuda_available()) QSKIP("no CUDA device");
    auto rep = gllm::dist::run_gpu_checks();
    QVERIFY(rep.skipped.empty());
    for (const auto& c : rep.checks) {
      qInfo("%s: %s %s", c.name.c_str(), c.status.c_str(), c.detail.c_str());
      QVERIFY2(c.status != "fail", (c.name + ": " + c.detail).c_str());
    }
  }

  void bf16_autocast_scope_on_cuda() {
    if (!gllm::dist::cuda_available()) QSKIP("no CUDA device");
    auto a = torch::randn({64, 64}, torch::kCUDA), b = torch::randn({64, 64}, torch::kCUDA);
    {
      gllm::dist::AutocastScope ac(torch::Device(torch::kCUDA), "bf16");
      QVERIFY(ac.active());
      QCOMPARE(torch::matmul(a, b).scalar_type(), torch::kBFloat16);
    }
    QCOMPARE(torch::matmul(a, b).scalar_type(), torch::kFloat32);  // restored
    auto m = gllm::dist::cuda_memory(0);
    QVERIFY(m.available);
    QVERIFY(m.peak_allocated >= m.allocated && m.allocated > 0);
  }
};

QTEST_APPLESS_MAIN(TestEngineCuda)
#include "test_engine_cuda.moc"
