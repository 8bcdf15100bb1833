// Tests of the workbench window: settings off, the run queue, runs folder and data cache in the
// test's own folder, so no test reads or writes the user's (or another test's) files.
#pragma once
#include <QTemporaryDir>
#include <QtGlobal>

namespace gllm::test {

inline void isolate_workbench(const QTemporaryDir& dir) {
  qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
  qputenv("GLLM_WORKBENCH_QUEUE", dir.filePath("queue.json").toUtf8());
  qputenv("GLLM_RUNS", dir.filePath("runs").toUtf8());
  qputenv("GLLM_DATA", dir.filePath("data").toUtf8());
}

}  // namespace gllm::test
