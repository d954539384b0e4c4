// option_table.h - options declared once, in a table that drives parsing
// (command line and job files), --help and the echo of every setting in
// the report.  Used by `hybridio bench`, `hybridio bench checkpoint` and
// `hybridio run`.
//
// Each entry names the option, its value's metavariable (nullptr for a
// flag), a one-line help, a parser into the settings struct (false: the
// value is not valid) and a reader back out of it (for the echo).
// Everything here is single-threaded and allocation is not a concern.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "json_out.h"

namespace hybridio::bench {

enum class OptKind { kSize, kNumber, kText, kFlag, kList };

// A setting's current value, for the human and JSON echo.
struct OptValue {
  OptKind kind = OptKind::kText;
  double number = 0;
  std::string text;
  bool flag = false;
  std::vector<std::string> list;

  static OptValue size(double v) { return {OptKind::kSize, v, {}, false, {}}; }
  static OptValue num(double v) { return {OptKind::kNumber, v, {}, false, {}}; }
  static OptValue str(std::string v) { return {OptKind::kText, 0, std::move(v), false, {}}; }
  static OptValue yes(bool v) { return {OptKind::kFlag, 0, {}, v, {}}; }
  static OptValue strings(std::vector<std::string> v) { return {OptKind::kList, 0, {}, false, std::move(v)}; }
};

template <typename T>
struct OptionSpec {
  const char* name;     // --name=value, --name value, or "name = value" in a job file
  const char* metavar;  // nullptr: a flag (--name, --name=0/1)
  const char* help;
  bool (*apply)(T& settings, const std::string& value);
  OptValue (*show)(const T& settings);
  bool per_job = true;  // false: command line / [global] only (e.g. --json)
};

// The human form of a value ("4M", "3", "on", "a,b").
std::string human_value(const OptValue& v);

// Writes a value as a JSON member.
void json_value(JsonWriter& w, const char* key, const OptValue& v);

// "1|true|on|yes|" -> true, "0|false|off|no" -> false; anything else: false return.
bool parse_flag(const std::string& text, bool* out);

// Parses a non-negative integer within [lo, hi].
bool parse_count(const std::string& text, unsigned long lo, unsigned long hi, unsigned* out);

// Finds an option by name; nullptr when there is none.
template <typename T>
const OptionSpec<T>* find_option(const std::vector<OptionSpec<T>>& table, const std::string& name) {
  for (const auto& o : table)
    if (name == o.name) return &o;
  return nullptr;
}

// Applies name=value; on failure writes one line into *error.
template <typename T>
bool apply_option(const std::vector<OptionSpec<T>>& table, const std::string& name, const std::string& value,
                  bool has_value, T* settings, std::string* error) {
  const OptionSpec<T>* o = find_option(table, name);
  if (!o) {
    *error = "unknown option --" + name + " (see --help)";
    return false;
  }
  if (o->metavar && !has_value) {
    *error = "--" + name + " needs a value: " + o->metavar;
    return false;
  }
  std::string v = value;
  if (!o->metavar && !has_value) v = "1";
  if (!o->apply(*settings, v)) {
    *error = "--" + name + "=" + value + " is not valid: " + o->help;
    return false;
  }
  return true;
}

// Applies the option argv[*i] ("--name", "--name=value", or "--name value"
// for an option that takes a value, which then consumes argv[*i + 1]);
// leaves *i on the last argument used.  On failure writes one line into *error.
template <typename T>
bool apply_argument(const std::vector<OptionSpec<T>>& table, int argc, char** argv, int* i, T* settings,
                    std::string* error) {
  std::string name = std::string(argv[*i]).substr(2), value;
  size_t eq = name.find('=');
  bool has_value = eq != std::string::npos;
  if (has_value) {
    value = name.substr(eq + 1);
    name.resize(eq);
  }
  const OptionSpec<T>* o = find_option(table, name);
  if (o && o->metavar && !has_value && *i + 1 < argc) {
    value = argv[++*i];
    has_value = true;
  }
  return apply_option(table, name, value, has_value, settings, error);
}

// Splits argv into options (applied in order) and positional arguments.
// Returns 0 when parsed, 1 when --help was asked for, 2 on an error
// (written into *error).
template <typename T>
int parse_command_line(const std::vector<OptionSpec<T>>& table, int argc, char** argv, T* settings,
                       std::vector<std::string>* positional, std::string* error) {
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return 1;
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      if (positional) {
        positional->push_back(arg);
        continue;
      }
      *error = "unexpected argument '" + arg + "' (see --help)";
      return 2;
    }
    if (!apply_argument(table, argc, argv, &i, settings, error)) return 2;
  }
  return 0;
}

// Options in front of a command (`hybridio run [options] [--] COMMAND ARGS`):
// parses up to "--" or the first argument that is not an option, and sets
// *command to the index of the command's first word (argc if none).  The
// command's own arguments are never looked at.  Returns as parse_command_line.
template <typename T>
int parse_leading_options(const std::vector<OptionSpec<T>>& table, int argc, char** argv, T* settings,
                          int* command, std::string* error) {
  int i = 0;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") return 1;
    if (arg.rfind("--", 0) != 0) break;
    if (!apply_argument(table, argc, argv, &i, settings, error)) return 2;
  }
  *command = i;
  return 0;
}

// One option as documentation shows it (the man pages): its row of the
// table with the default in human form ("" when there is none).
struct OptionDoc {
  std::string name, metavar, help, default_value;  // metavar "": a flag
  bool per_job = true;
};

// Every option of `table` in table order, as --help lists them.
template <typename T>
std::vector<OptionDoc> describe_options(const std::vector<OptionSpec<T>>& table, const T& defaults) {
  std::vector<OptionDoc> docs;
  for (const auto& o : table)
    docs.push_back({o.name, o.metavar ? o.metavar : "", o.help, human_value(o.show(defaults)), o.per_job});
  return docs;
}

// The options part of --help.
template <typename T>
void print_option_help(FILE* out, const std::vector<OptionSpec<T>>& table, const T& defaults) {
  for (const auto& o : table) {
    std::string flag = std::string("--") + o.name + (o.metavar ? std::string("=") + o.metavar : "");
    std::string def = human_value(o.show(defaults));
    fprintf(out, "  %-24s %s%s\n", flag.c_str(), o.help,
            def.empty() ? "" : (" [" + def + "]").c_str());
  }
}

// Every setting, in table order, as members of the current JSON object.
template <typename T>
void echo_settings_json(JsonWriter& w, const std::vector<OptionSpec<T>>& table, const T& s) {
  for (const auto& o : table) json_value(w, o.name, o.show(s));
}

// Every setting as "name=value" words, for the report's header line.
template <typename T>
std::string echo_settings_line(const std::vector<OptionSpec<T>>& table, const T& s, bool per_job_only) {
  std::string line;
  for (const auto& o : table) {
    if (per_job_only && !o.per_job) continue;
    std::string v = human_value(o.show(s));
    if (v.empty()) continue;
    line += (line.empty() ? "" : " ") + std::string(o.name) + "=" + v;
  }
  return line;
}

}  // namespace hybridio::bench
