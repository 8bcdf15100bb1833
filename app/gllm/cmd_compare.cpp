// `gllm compare RUN... --baseline RUN [--metric M] [--2x2] [--json]`: arms matched by seed against
// the baseline's arm (paired mean, SD, t-interval, deltas, n_improved) and the 2×2 DoD.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/io/text_table.h"
#include "engine/train/compare.h"

namespace {

// Runs under each folder; a damaged run folder inside a parent is reported and skipped, so one
// bad folder does not stop the comparison of the others.
std::vector<gllm::RunInfo> read_all(const std::vector<std::string>& dirs) {
  std::vector<gllm::RunInfo> runs;
  for (const auto& d : dirs) {
    std::vector<std::string> errors;
    auto rs = gllm::list_runs(d, &errors);
    for (const auto& e : errors) std::fprintf(stderr, "gllm: warning: skipped %s\n", e.c_str());
    if (rs.empty())
      throw gllm::Error(d +
                        " holds no readable run folder; give run folders written by gllm train");
    for (auto& r : rs)
      if (std::none_of(runs.begin(), runs.end(),
                       [&](const gllm::RunInfo& x) { return x.dir == r.dir; }))
        runs.push_back(std::move(r));
  }
  return runs;
}

// "± sd [lo, hi]" or, for one seed, a plain statement that there is no interval.
std::string spread(const nlohmann::json& s) {
  char buf[160];
  if (!s.value("interval", true)) return " (one seed: no interval)";
  std::snprintf(buf, sizeof buf, " ± %.6f [%+.6f, %+.6f]", s.value("sd", 0.0),
                s.value("ci_low", 0.0), s.value("ci_high", 0.0));
  return buf;
}

gllm::cli::RegisterCommand reg_compare("compare", [](CLI::App& root) {
  auto* cmd = root.add_subcommand("compare", "Compare runs against a baseline, matched by seed");
  struct O {
    std::vector<std::string> runs;
    std::string baseline, metric = "heldout_bpb";
    bool two_by_two = false, json = false;
  };
  auto o = std::make_shared<O>();
  cmd->add_option("runs", o->runs, "Run folders (or folders of runs)")->required();
  cmd->add_option("--baseline", o->baseline,
                  "A run of the baseline arm (its arm is the config name)")
      ->required();
  cmd->add_option("--metric", o->metric, "heldout_bpb | val_bpb | final_loss")
      ->check(CLI::IsMember({"heldout_bpb", "val_bpb", "final_loss"}));
  cmd->add_flag("--2x2", o->two_by_two,
                "Four arms: baseline 00, then 01, 10, 11 in order; adds the DoD");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    auto base = gllm::read_run(o->baseline);
    auto dirs = o->runs;
    dirs.insert(dirs.begin(), o->baseline);
    auto runs = read_all(dirs);
    auto j = gllm::compare_runs(runs, base.name, o->metric, o->two_by_two);
    if (o->json) {
      gllm::cli::print_json(j);
      return;
    }
    std::printf("%s, baseline arm %s\n", o->metric.c_str(), base.name.c_str());
    auto fmt = [](const char* f, auto... v) {
      char b[96];
      std::snprintf(b, sizeof b, f, v...);
      return std::string(b);
    };
    using gllm::Align;
    gllm::TextTable table(
        {"  arm", "mean", "± SD", "n", "Δ vs baseline", "± SD", "95 % t-interval", "improved"},
        {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right,
         Align::Left, Align::Right});
    for (const auto& a : j["arms"]) {
      std::vector<std::string> row{"  " + a["arm"].get<std::string>()};
      if (a.contains("summary")) {
        const auto& m = a["summary"];
        const bool interval = m.value("interval", true);
        row.insert(row.end(), {fmt("%.6f", m["mean"].get<double>()),
                               interval ? fmt("%.6f", m["sd"].get<double>()) : std::string("—"),
                               std::to_string(m["n"].get<int>())});
      } else {
        row.insert(row.end(), {"", "", ""});
      }
      if (a.contains("vs_baseline") && !a["vs_baseline"].is_null()) {
        const auto& v = a["vs_baseline"];
        const bool interval = v.value("interval", true);  // one seed: no interval to print
        row.insert(row.end(), {fmt("%+.6f", v["mean"].get<double>()),
                               interval ? fmt("%.6f", v["sd"].get<double>()) : std::string("—"),
                               interval ? fmt("[%+.6f, %+.6f]", v["ci_low"].get<double>(),
                                              v["ci_high"].get<double>())
                                        : std::string("one seed: no interval"),
                               fmt("%d/%d", v["n_improved"].get<int>(), v["n"].get<int>())});
      }
      table.add_row(row);
    }
    std::cout << table.render() << std::flush;
    if (j.contains("dod")) {
      const auto& d = j["dod"];
      std::printf("  DoD %s: %+.6f%s\n", d["formula"].get<std::string>().c_str(),
                  d["mean"].get<double>(), spread(d).c_str());
    }
  });
});

}  // namespace
