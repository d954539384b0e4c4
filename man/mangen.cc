// mangen.cc - hybridio_mangen: writes the man pages into OUT/man{1,3,5}.
//
//   hybridio_mangen MAN_SOURCE_DIR INCLUDE_DIR VERSION OUT_DIR
//
// Sections 1 and 5 are the hand-written templates of man/pages/ with the
// tables filled in: every command's options from the option table its
// parser and --help use (bench/option_table.h), the settings from the
// library's settings table (through hybridio_internal), the bench engines
// and the checkpoint presets from theirs.  Section 3 is one page per
// function of the public C headers (api_pages.h) and the libhybridio(3)
// overview.  A table row cannot miss its page: a template without the
// place for its table, a header function without notes, or notes without
// a function stop the build.  Exit status 0, or 1 with one line on stderr.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "api_pages.h"
#include "bench_engine.h"
#include "bench_options.h"
#include "calibrate_command.h"
#include "checkpoint_job.h"
#include "checkpoint_presets.h"
#include "hybridio_internal/settings_text.h"
#include "option_table.h"
#include "roff.h"
#include "run_command.h"
#include "train_job.h"

namespace hb = hybridio::bench;
namespace man = hybridio::man;

namespace {

// The OPTIONS list of a command page.  `job_files`: say which options a job
// file cannot set (hybridio bench).
std::string options_block(const std::vector<hb::OptionDoc>& options, bool job_files) {
  std::string out;
  for (const hb::OptionDoc& o : options) {
    out += ".TP\n";
    if (o.metavar.empty())
      out += ".B \\-\\-" + man::word(o.name) + "\n";
    else
      out += ".BI \\-\\-" + man::word(o.name) + "= " + man::word(o.metavar) + "\n";
    out += man::text(o.help) + ".\n";
    if (!o.metavar.empty() && !o.default_value.empty())
      out += ".br\nDefault: \\fB" + man::word(o.default_value) + "\\fP\n";
    else if (o.metavar.empty() && o.default_value == "1")
      out += "On by default.\n";
    if (job_files && !o.per_job) out += "Command line and job file [global] section only.\n";
  }
  return out;
}

std::string settings_block(const std::vector<hybridio::internal::SettingDoc>& settings) {
  std::string out;
  for (const auto& s : settings) {
    out += ".TP\n.BR " + man::word(s.variable) + " \" (file key \" " + man::word(s.key) + " )\n";
    out += man::text(s.help) + ".\n.br\n";
    out += "Accepted: " + man::text(s.accepted) + "\n";
    out += ".br\nDefault: " + (s.default_value.empty() ? std::string("unset") : "\\fB" + man::word(s.default_value) + "\\fP") +
           "\n";
  }
  return out;
}

std::string engines_block() {
  std::string out;
  for (const hb::EngineOps* e : hb::engines())
    out += ".TP\n.B " + man::word(e->name) + "\n" + man::text(e->help) + ".\n";
  return out;
}

std::string presets_block() {
  std::string out;
  for (const hb::ModelPreset& p : hb::model_presets()) {
    char size[64];
    snprintf(size, sizeof size, "%.0f GiB over %u ranks", p.mlperf_bytes / double(1ULL << 30), p.mlperf_ranks);
    out += ".TP\n.B " + man::word(p.name) + "\n" + man::text(p.label) + ": " + size + ".\n";
  }
  return out;
}

struct Page {
  std::string name;  // "hybridio-run"
  char section;
  std::map<std::string, std::string> tables;
};

bool make_dir(const std::string& dir) { return mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST; }

int fail(const std::string& why) {
  fprintf(stderr, "hybridio_mangen: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: hybridio_mangen MAN_SOURCE_DIR INCLUDE_DIR VERSION OUT_DIR\n");
    return 2;
  }
  const std::string source = argv[1], include = argv[2], version = argv[3], out = argv[4];
  // calibrate's default --output follows the builder's $XDG_CONFIG_HOME and
  // $HOME; the page shows the default of a user without XDG_CONFIG_HOME.
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", "~", 1);

  std::string error;
  std::vector<man::ApiFunction> functions;
  for (const char* header : {"hybridio/hybridio.h", "hybridio/policy.h"})
    if (!man::scan_header(include + "/" + header, header, &functions, &error)) return fail(error);
  std::string notes_text;
  if (!man::read_file(source + "/api_notes.txt", &notes_text)) return fail("cannot read " + source + "/api_notes.txt");
  std::vector<man::ApiNotes> notes;
  if (!man::parse_notes(notes_text, &notes, &error)) return fail(error);

  for (const char* sub : {"", "/man1", "/man3", "/man5"})
    if (!make_dir(out + sub)) return fail("cannot make " + out + sub);
  std::string index;
  if (!man::write_api_pages(functions, notes, version, out + "/man3", &index, &error)) return fail(error);

  const std::vector<Page> pages = {
      {"hybridio", '1', {}},
      {"hybridio-checkpoint", '1',
       {{"OPTIONS", options_block(hb::checkpoint_option_docs(), false)}, {"PRESETS", presets_block()}}},
      {"hybridio-bench", '1',
       {{"OPTIONS", options_block(hb::describe_options(hb::bench_option_table(), hb::BenchJob{}), true)},
        {"ENGINES", engines_block()},
        {"TRAIN_OPTIONS", options_block(hb::train_option_docs(), false)}}},
      {"hybridio-calibrate", '1', {{"OPTIONS", options_block(hybridio::cli::calibrate_option_docs(), false)}}},
      {"hybridio-run", '1', {{"OPTIONS", options_block(hybridio::cli::run_option_docs(), false)}}},
      {"hybridio-config", '1', {}},
      {"hybridio-config", '5', {{"SETTINGS", settings_block(hybridio::internal::setting_docs())}}},
      {"libhybridio", '3', {{"FUNCTIONS", index}}},
  };
  for (const Page& p : pages) {
    std::string file = p.name + "." + p.section;
    std::string tmpl, page;
    if (!man::read_file(source + "/pages/" + file + ".in", &tmpl)) return fail("cannot read pages/" + file + ".in");
    auto values = p.tables;
    values["VERSION"] = version;
    if (!man::fill_template(tmpl, values, &page, &error)) return fail("pages/" + file + ".in: " + error);
    page = ".\\\" Generated by hybridio_mangen from man/pages/" + file + ".in and the tables; do not edit.\n" + page;
    if (!man::write_file(out + "/man" + p.section + "/" + file, page)) return fail("cannot write " + file);
  }
  return 0;
}
