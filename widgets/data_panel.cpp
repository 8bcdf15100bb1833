// The Data panel: inputs, options and the output folder of a prepare; the prepare runs on a worker
// (progress polled from atomics, news lines queued back), its manifest shown as a table of splits.
#include "widgets/data_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/dataset/brown_tags.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/import_shards.h"
#include "engine/io/paths.h"
#include "widgets/widget_util.h"

namespace gllm::gui {
namespace {

// A prepare's five stages, then an import's two.
const char* const kStages[] = {"scan",   "sample", "tokenizer", "encode",
                               "finish", "check",  "import"};
constexpr int kPrepareStages = 5, kStageCount = 7;

int stageIndex(const std::string& s) {
  for (int i = 0; i < kStageCount; ++i)
    if (s == kStages[i]) return i;
  return -1;
}

QSpinBox* countBox(QWidget* parent, int least, int most, int value, const QString& tip) {
  auto* b = new QSpinBox(parent);
  b->setRange(least, most);
  b->setValue(value);
  b->setGroupSeparatorShown(true);
  b->setToolTip(tip);
  return b;
}

// " POS tags kept …" for a dataset prepared from the Brown corpus (its manifest's annotations),
// else "".
QString tagsNote(const nlohmann::json& m) {
  const nlohmann::json t = gllm::brown_tags_entry(m);
  if (t.empty()) return {};
  return QCoreApplication::translate("DataPanel",
                                     " POS tags kept (%1 words of %2 documents) for the profiles "
                                     "and the probe.")
      .arg(QLocale().toString(qulonglong(t.value("words", uint64_t(0)))))
      .arg(QLocale().toString(qulonglong(t.value("documents", uint64_t(0)))));
}

}  // namespace

DataPanel::DataPanel(QWidget* parent)
    : QWidget(parent),
      m_shared(std::make_shared<Shared>()),
      m_watcher(new QFutureWatcher<DatasetOutcome>(this)) {
  buildLayout();
  m_poll = new QTimer(this);
  m_poll->setInterval(100);
  connect(m_poll, &QTimer::timeout, this, &DataPanel::pollProgress);
  connect(m_watcher, &QFutureWatcher<DatasetOutcome>::finished, this, [this] {
    m_poll->stop();
    setBusy(false);
    showOutcome(m_watcher->result());
    Q_EMIT finished();
  });
  setOptions(PrepareOptions{});
}

DataPanel::~DataPanel() {
  // The worker stops at its next document; what it wrote is continued by the next prepare.
  m_shared->stop = true;
  m_watcher->disconnect(this);
  m_watcher->waitForFinished();
}

void DataPanel::buildLayout() {
  auto* layout = new QVBoxLayout(this);
  auto* intro =
      new QLabel(tr("Your corpus (text, JSON Lines, .gz, .zst) as llm.c token shards, or shards "
                    "made elsewhere imported (Format below)."),
                 this);
  intro->setToolTip(
      tr("Documents are split by content hash into train, validation and held-out; the BPE "
         "tokenizer is trained on a sample across the whole input, never the evaluation splits. "
         "Use in run settings trains from the dataset."));
  intro->setObjectName(QStringLiteral("hint"));
  intro->setWordWrap(true);
  layout->addWidget(intro);

  auto* inputRow = new QHBoxLayout;
  m_inputs = new QListWidget(this);
  m_inputs->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_inputs->setMinimumHeight(48);
  m_inputs->setMaximumHeight(90);
  m_inputs->setToolTip(tr("The files and folders to read (folders recursively)."));
  inputRow->addWidget(m_inputs, 1);
  auto* inputButtons = new QVBoxLayout;
  auto* addFiles = new QPushButton(tr("Add files…"), this);
  auto* addFolder = new QPushButton(tr("Add folder…"), this);
  auto* remove = new QPushButton(tr("Remove"), this);
  for (QPushButton* b : {addFiles, addFolder, remove}) inputButtons->addWidget(b);
  inputButtons->addStretch(1);
  inputRow->addLayout(inputButtons);
  layout->addLayout(inputRow);
  connect(addFiles, &QPushButton::clicked, this,
          [this] { addInputs(QFileDialog::getOpenFileNames(this, tr("Corpus files"))); });
  connect(addFolder, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Corpus folder"));
    if (!d.isEmpty()) addInputs({d});
  });
  connect(remove, &QPushButton::clicked, this, [this] { qDeleteAll(m_inputs->selectedItems()); });

  auto* outRow = new QHBoxLayout;
  m_out = new QLineEdit(this);
  m_out->setPlaceholderText(tr("the dataset folder (made if missing)"));
  auto* browse = new QPushButton(tr("Browse…"), this);
  outRow->addWidget(new QLabel(tr("Dataset folder"), this));
  outRow->addWidget(m_out, 1);
  outRow->addWidget(browse);
  layout->addLayout(outRow);
  // The actions and the progress next, in view without scrolling; the options below them.
  auto* actions = new QHBoxLayout;
  m_prepare = new QPushButton(tr("Prepare"), this);
  m_prepare->setObjectName(QStringLiteral("primary"));
  m_prepare->setToolTip(
      tr("Prepare in the background; a stopped or killed prepare continues "
         "where it stopped, a finished one is never rewritten."));
  m_stop = new QPushButton(tr("Stop"), this);
  m_stop->setEnabled(false);
  auto* open = new QPushButton(tr("Open dataset…"), this);
  m_use = new QPushButton(tr("Use in run settings"), this);
  m_use->setEnabled(false);
  m_use->setToolTip(
      tr("Train from this dataset: data.corpus = prepared, its folder and vocabulary"));
  for (QPushButton* b : {m_prepare, m_stop, open, m_use}) actions->addWidget(b);
  actions->addStretch(1);
  layout->addLayout(actions);
  connect(m_prepare, &QPushButton::clicked, this, [this] { prepare(); });
  connect(m_stop, &QPushButton::clicked, this, &DataPanel::stop);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Prepared dataset"));
    if (!d.isEmpty()) openDataset(d);
  });
  connect(m_use, &QPushButton::clicked, this, &DataPanel::useInRunSettings);

  auto* progressRow = new QHBoxLayout;
  m_progress = new QProgressBar(this);
  m_progress->setRange(0, 1000);
  m_progress->setValue(0);
  m_progress->setTextVisible(false);
  m_stage = new QLabel(this);
  m_stage->setMinimumWidth(160);
  m_stage->setWordWrap(true);
  progressRow->addWidget(m_progress, 1);
  progressRow->addWidget(m_stage);
  layout->addLayout(progressRow);
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Dataset folder"));
    if (!d.isEmpty()) m_out->setText(d);
  });
  m_vocab = countBox(this, 257, 65535, 8192,
                     tr("BPE vocabulary (shards hold uint16 tokens: at most 65,535)"));
  m_valTokens = countBox(this, 1, 2000000000, 1000000,
                         tr("Tokens in the validation split (seed 001: 20,970,000)"));
  m_heldoutTokens = countBox(this, 1, 2000000000, 1000000,
                             tr("Tokens in the held-out split (seed 001: 20,970,000)"));
  // One setting a row: the panel fits a 540 px dock.
  form->addRow(tr("Vocabulary"), m_vocab);
  auto* evalSizes = new QHBoxLayout;
  evalSizes->addWidget(m_valTokens);
  evalSizes->addWidget(new QLabel(tr("held-out"), this));
  evalSizes->addWidget(m_heldoutTokens);
  form->addRow(tr("Val tokens"), evalSizes);
  m_sample = countBox(this, 1000, 2000000000, 10000000,
                      tr("Characters of train documents the tokenizer is trained on, drawn across "
                         "the whole input"));
  m_shardTokens = countBox(this, 1024, 2000000000, 100000000,
                           tr("Tokens per shard (llm.c and modded-nanogpt use 100,000,000)"));
  form->addRow(tr("Tokenizer sample"), m_sample);
  form->addRow(tr("Shard tokens"), m_shardTokens);
  m_format = new QComboBox(this);
  m_format->addItem(tr("auto (by file name)"), QStringLiteral("auto"));
  m_format->addItem(tr("plain text"), QStringLiteral("text"));
  m_format->addItem(tr("JSON Lines"), QStringLiteral("jsonl"));
  m_format->addItem(tr("Brown corpus files"), QStringLiteral("brown"));
  m_format->addItem(tr("llm.c shards made elsewhere (import)"), QStringLiteral("shards"));
  m_format->setToolTip(
      tr("Import: the inputs are llm.c token shards (llm.c, modded-nanogpt); a shard named …val… "
         "is validation, held-out is cut from the end of the train shards"));
  m_field = new QLineEdit(this);
  m_field->setToolTip(tr("JSON Lines: the string field that holds the text"));
  m_utf8 = new QComboBox(this);
  m_utf8->addItem(tr("refuse invalid UTF-8"), false);
  m_utf8->addItem(tr("replace it (counted)"), true);
  m_skipBad = new QCheckBox(tr("skip bad JSON lines (counted)"), this);
  auto* reading = new QHBoxLayout;
  reading->addWidget(m_format, 1);
  reading->addWidget(new QLabel(tr("field"), this));
  reading->addWidget(m_field, 1);
  form->addRow(tr("Format"), reading);
  m_modelRow = new QWidget(this);
  auto* modelRow = new QHBoxLayout(m_modelRow);
  modelRow->setContentsMargins(0, 0, 0, 0);
  m_model = new QLineEdit(m_modelRow);
  m_model->setPlaceholderText(tr("the sentencepiece .model the shards were encoded with"));
  auto* modelBrowse = new QPushButton(tr("Browse…"), m_modelRow);
  modelRow->addWidget(m_model, 1);
  modelRow->addWidget(modelBrowse);
  form->addRow(tr("Tokenizer model"), m_modelRow);
  connect(modelBrowse, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Sentencepiece model"), QString(),
                                                   tr("sentencepiece models (*.model);;all (*)"));
    if (!f.isEmpty()) m_model->setText(f);
  });
  connect(m_format, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &DataPanel::updateFormatRows);
  auto* bad = new QHBoxLayout;
  bad->addWidget(m_utf8);
  bad->addWidget(m_skipBad);
  form->addRow(tr("Bad input"), bad);
  layout->addLayout(form);

  m_error = new QLabel(this);
  m_error->setObjectName(QStringLiteral("fieldError"));
  m_error->setWordWrap(true);
  m_error->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_error->setVisible(false);
  layout->addWidget(m_error);
  m_status = new QLabel(tr("No dataset shown yet."), this);
  m_status->setWordWrap(true);
  m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  layout->addWidget(m_status);

  m_splits = new QTableWidget(0, 6, this);
  m_splits->setHorizontalHeaderLabels(
      {tr("split"), tr("documents"), tr("tokens"), tr("bytes"), tr("bytes/token"), tr("shards")});
  m_splits->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_splits->verticalHeader()->setVisible(false);
  m_splits->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_splits->setMinimumHeight(110);
  layout->addWidget(m_splits);
  m_log = new QPlainTextEdit(this);
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(500);
  m_log->setMinimumHeight(60);
  m_log->setPlaceholderText(tr("What the prepare says appears here."));
  layout->addWidget(m_log, 1);
  updateFormatRows();
}

bool DataPanel::importing() const {
  return m_format->currentData().toString() == QLatin1String("shards");
}

void DataPanel::setTokenizerModel(const QString& path) {
  m_model->setText(path);
}

QString DataPanel::tokenizerModel() const {
  return m_model->text().trimmed();
}

void DataPanel::updateFormatRows() {
  // An import reads shards as they are: no vocabulary, tokenizer sample, shard size, validation
  // size or text reading options of its own; held-out is what it cuts from the train shards.
  const bool imp = importing();
  for (QWidget* w : std::initializer_list<QWidget*>{m_vocab, m_valTokens, m_sample, m_shardTokens,
                                                    m_field, m_utf8, m_skipBad})
    w->setEnabled(!imp);
  m_modelRow->setEnabled(imp);
  m_prepare->setText(imp ? tr("Import") : tr("Prepare"));
}

void DataPanel::addInputs(const QStringList& paths) {
  for (const QString& p : paths) {
    if (p.isEmpty() || !m_inputs->findItems(p, Qt::MatchExactly).isEmpty()) continue;
    m_inputs->addItem(p);
  }
  // A first input names the default dataset: <data cache>/datasets/<its name>.
  if (m_out->text().isEmpty() && m_inputs->count() > 0) {
    QString name = QFileInfo(m_inputs->item(0)->text()).completeBaseName();
    if (name.isEmpty()) name = QStringLiteral("corpus");
    m_out->setText(QDir(qs(data_cache_dir())).filePath(QStringLiteral("datasets/") + name));
  }
}

void DataPanel::setInputs(const QStringList& paths) {
  m_inputs->clear();
  addInputs(paths);
}

QStringList DataPanel::inputs() const {
  QStringList out;
  for (int i = 0; i < m_inputs->count(); ++i) out << m_inputs->item(i)->text();
  return out;
}

void DataPanel::setOutputDir(const QString& dir) {
  m_out->setText(dir);
}

QString DataPanel::outputDir() const {
  return m_out->text().trimmed();
}

PrepareOptions DataPanel::options() const {
  PrepareOptions o;
  for (const QString& p : inputs()) o.inputs.push_back(ss(p));
  o.out_dir = ss(outputDir());
  o.format = ss(m_format->currentData().toString());
  o.read.field = ss(m_field->text().trimmed());
  o.read.replace_invalid_utf8 = m_utf8->currentData().toBool();
  o.read.skip_bad_lines = m_skipBad->isChecked();
  o.vocab = m_vocab->value();
  o.tokenizer_sample = uint64_t(m_sample->value());
  o.val_tokens = uint64_t(m_valTokens->value());
  o.heldout_tokens = uint64_t(m_heldoutTokens->value());
  o.shard_tokens = uint64_t(m_shardTokens->value());
  return o;
}

void DataPanel::setOptions(const PrepareOptions& o) {
  QStringList paths;
  for (const auto& p : o.inputs) paths << qs(p);
  if (!paths.isEmpty()) setInputs(paths);
  if (!o.out_dir.empty()) m_out->setText(qs(o.out_dir));
  m_format->setCurrentIndex(std::max(0, m_format->findData(qs(o.format))));
  m_field->setText(qs(o.read.field));
  m_utf8->setCurrentIndex(o.read.replace_invalid_utf8 ? 1 : 0);
  m_skipBad->setChecked(o.read.skip_bad_lines);
  auto clampInt = [](uint64_t v) { return int(std::min<uint64_t>(v, 2000000000)); };
  m_vocab->setValue(o.vocab);
  m_sample->setValue(clampInt(o.tokenizer_sample));
  m_valTokens->setValue(clampInt(o.val_tokens));
  m_heldoutTokens->setValue(clampInt(o.heldout_tokens));
  m_shardTokens->setValue(clampInt(o.shard_tokens));
}

QString DataPanel::prepare() {
  if (m_busy) return tr("a prepare is already running; stop it first");
  const PrepareOptions o = options();
  const bool imp = importing();
  ImportOptions io;
  io.inputs = o.inputs;
  io.out_dir = o.out_dir;
  io.tokenizer_model = ss(tokenizerModel());
  io.heldout_tokens = o.heldout_tokens;
  QString refusal;
  if (o.inputs.empty())
    refusal = imp ? tr("no input: add the shard files or folders to import (Add files… / Add "
                       "folder…)")
                  : tr("no input: add the corpus files or folders to read (Add files… / Add "
                       "folder…)");
  else if (o.out_dir.empty())
    refusal = tr("no dataset folder: give the folder to write the dataset to");
  else if (imp && io.tokenizer_model.empty())
    refusal =
        tr("no tokenizer model: importing shards needs the sentencepiece .model that made "
           "them (Tokenizer model, Browse…)");
  if (!refusal.isEmpty()) {
    showError(refusal);
    return refusal;
  }
  showError({});
  m_log->clear();
  m_shared = std::make_shared<Shared>();
  auto shared = m_shared;
  setBusy(true);
  m_poll->start();
  m_watcher->setFuture(QtConcurrent::run([this, o, io, imp, shared] {
    DatasetOutcome r;
    r.dir = qs(o.out_dir);
    PrepareHooks hooks;
    hooks.stop = &shared->stop;
    hooks.progress = [shared](const PrepareProgress& p) {
      shared->stage = stageIndex(p.stage);
      shared->done = p.done;
      shared->total = p.total;
    };
    // News lines go to the panel's log (queued: the panel outlives the worker).
    hooks.log = [this](const std::string& line) {
      QMetaObject::invokeMethod(
          this, [this, l = qs(line)] { appendLog(l); }, Qt::QueuedConnection);
    };
    QElapsedTimer t;
    t.start();
    try {
      const PrepareResult p = imp ? import_shards(io, hooks) : prepare_dataset(o, hooks);
      r.manifest = p.manifest;
      r.alreadyComplete = p.already_complete;
      r.resumed = p.resumed;
    } catch (const std::exception& e) {
      r.error = QString::fromUtf8(e.what());
      r.stopped = shared->stop.load();
    }
    r.seconds = double(t.elapsed()) / 1000.0;
    return r;
  }));
  return {};
}

void DataPanel::stop() {
  if (!m_busy) return;
  m_shared->stop = true;
  m_stage->setText(tr("stopping at the next document…"));
}

bool DataPanel::busy() const {
  return m_busy;
}

void DataPanel::openDataset(const QString& dir) {
  if (m_busy) return;
  showError({});
  setBusy(true);
  m_progress->setRange(0, 0);
  m_stage->setText(tr("reading the manifest…"));
  m_watcher->setFuture(QtConcurrent::run([dir] {
    DatasetOutcome r;
    r.dir = dir;
    r.alreadyComplete = true;
    try {
      r.manifest = read_manifest(ss(dir));
    } catch (const std::exception& e) {
      r.error = QString::fromUtf8(e.what());
    }
    return r;
  }));
}

void DataPanel::pollProgress() {
  const int stage = m_shared->stage.load();
  if (stage < 0 || m_shared->stop.load()) return;
  const uint64_t done = m_shared->done.load(), total = m_shared->total.load();
  const bool imp = stage >= kPrepareStages;
  const QString what = imp ? tr("shards") : stage == 0 ? tr("bytes") : tr("documents");
  const int number = imp ? stage - kPrepareStages + 1 : stage + 1;
  const int count = imp ? kStageCount - kPrepareStages : kPrepareStages;
  if (total > 0) {
    m_progress->setRange(0, 1000);
    m_progress->setValue(int(1000.0 * double(std::min(done, total)) / double(total)));
    m_stage->setText(tr("%1 (%2 of %3): %4 of %5 %6")
                         .arg(QString::fromLatin1(kStages[stage]))
                         .arg(number)
                         .arg(count)
                         .arg(done)
                         .arg(total)
                         .arg(what));
  } else {
    m_progress->setRange(0, 0);  // busy, no share known
    m_stage->setText(
        tr("%1 (%2 of %3)…").arg(QString::fromLatin1(kStages[stage])).arg(number).arg(count));
  }
}

void DataPanel::showOutcome(const DatasetOutcome& r) {
  m_progress->setRange(0, 1000);
  if (!r.error.isEmpty()) {
    m_progress->setValue(0);
    m_stage->setText(r.stopped ? tr("stopped") : tr("failed"));
    const QString stopped = importing()
                                ? tr("Stopped: Import again starts it over (nothing half-made is "
                                     "used).")
                                : tr("Stopped: Prepare again continues where it stopped.");
    showError(r.stopped ? stopped : r.error);
    return;
  }
  m_progress->setValue(1000);
  m_stage->setText(tr("done"));
  showManifest(r.dir, r.manifest);
  uint64_t in = 0;
  for (const auto& f : r.manifest.value("inputs", nlohmann::json::array()))
    in += f.value("size", uint64_t(0));
  const QString size = QLocale().formattedDataSize(qint64(in));
  const bool imported =
      r.manifest.value("options", nlohmann::json::object()).value("imported", false);
  if (imported && r.seconds > 0)
    m_status->setText(r.alreadyComplete
                          ? tr("%1 already holds this import (nothing written).").arg(r.dir)
                          : tr("Imported %1: %2 shard(s), %3, in %4 s.")
                                .arg(r.dir)
                                .arg(r.manifest.value("inputs", nlohmann::json::array()).size())
                                .arg(size)
                                .arg(r.seconds, 0, 'f', 1));
  else if (r.seconds > 0 && !r.alreadyComplete)
    m_status->setText(tr("Prepared %1%2: %3 of input in %4 s (%5 MB/s).")
                          .arg(r.dir, r.resumed ? tr(" (continued)") : QString(), size)
                          .arg(r.seconds, 0, 'f', 1)
                          .arg(double(in) / 1e6 / r.seconds, 0, 'f', 1));
  else if (r.seconds > 0)
    m_status->setText(
        tr("%1 is already prepared from these inputs with these options (nothing written).")
            .arg(r.dir));
  if (r.seconds > 0) m_status->setText(m_status->text() + tagsNote(r.manifest));
}

void DataPanel::showManifest(const QString& dir, const nlohmann::json& m) {
  m_datasetDir = dir;
  m_manifest = m;
  m_splits->setRowCount(0);
  const auto splits = m.value("splits", nlohmann::json::object());
  for (const char* s : {"train", "val", "heldout"}) {
    if (!splits.contains(s)) continue;
    const auto& sp = splits[s];
    const int r = m_splits->rowCount();
    m_splits->insertRow(r);
    auto number = [](const QString& text) {
      auto* it = new QTableWidgetItem(text);
      it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      return it;
    };
    const QLocale loc;
    m_splits->setItem(r, 0, new QTableWidgetItem(QString::fromLatin1(s)));
    m_splits->setItem(r, 1, number(loc.toString(qulonglong(sp.value("documents", uint64_t(0))))));
    m_splits->setItem(r, 2, number(loc.toString(qulonglong(sp.value("tokens", uint64_t(0))))));
    m_splits->setItem(r, 3, number(loc.toString(qulonglong(sp.value("bytes", uint64_t(0))))));
    m_splits->setItem(r, 4, number(QString::number(sp.value("bytes_per_token", 0.0), 'f', 3)));
    m_splits->setItem(r, 5,
                      number(QString::number(sp.value("shards", nlohmann::json::array()).size())));
  }
  const int vocab = m.value("tokenizer", nlohmann::json::object()).value("vocab_size", 0);
  m_status->setText(tr("%1: vocabulary %2, %3 input files.")
                        .arg(dir)
                        .arg(vocab)
                        .arg(m.value("inputs", nlohmann::json::array()).size()) +
                    tagsNote(m));
  m_use->setEnabled(vocab > 0);
}

void DataPanel::useInRunSettings() {
  if (m_datasetDir.isEmpty()) return;
  const int vocab = m_manifest.value("tokenizer", nlohmann::json::object()).value("vocab_size", 0);
  Q_EMIT datasetChosen(m_datasetDir, vocab);
}

void DataPanel::appendLog(const QString& line) {
  m_log->appendPlainText(line);
}

QStringList DataPanel::logLines() const {
  return m_log->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

QString DataPanel::statusText() const {
  return m_status->text();
}

void DataPanel::setBusy(bool on) {
  m_busy = on;
  m_prepare->setEnabled(!on);
  m_stop->setEnabled(on);
  if (on) m_use->setEnabled(false);
}

void DataPanel::showError(const QString& text) {
  m_lastError = text;
  m_error->setText(text);
  m_error->setVisible(!text.isEmpty());
}

}  // namespace gllm::gui
