/* sweep: parameter grids, job lists for GNU parallel and Slurm, local parallel runs, merging. */
#include "sweep.hpp"
#include "config.hpp"
#include "units.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace hiosim {

std::vector<std::vector<std::pair<std::string, std::string>>> expand_grid(const Grid& grid)
{
  std::vector<std::vector<std::pair<std::string, std::string>>> out{{}};
  for (const auto& [name, values] : grid) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& partial : out)
      for (const auto& v : values) {
        auto row = partial;
        row.emplace_back(name, v);
        next.push_back(row);
      }
    out = std::move(next);
  }
  return out;
}

std::string shell_quote(const std::string& s)
{
  if (not s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+@%") ==
                           std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

std::string self_exe(const std::string& argv0)
{
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = '\0';
    return buf;
  }
  return fs::absolute(argv0).string();
}

// Runs the commands through /bin/sh, at most `jobs` at a time; returns how many failed.
int run_local(const std::vector<std::string>& cmds, int jobs, const fs::path& logdir)
{
  std::map<pid_t, size_t> running;
  size_t next = 0;
  int failed  = 0;
  size_t finished = 0;
  bool tty = isatty(STDERR_FILENO);
  while (finished < cmds.size()) {
    while (next < cmds.size() && static_cast<int>(running.size()) < jobs) {
      std::string log = (logdir / ("run-" + std::to_string(next + 1) + ".log")).string();
      std::string cmd = cmds[next] + " > " + shell_quote(log) + " 2>&1";
      pid_t pid = fork();
      if (pid < 0)
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      running[pid] = next++;
    }
    int status = 0;
    pid_t pid = wait(&status);
    if (pid < 0)
      throw std::runtime_error(std::string("wait: ") + std::strerror(errno));
    auto it = running.find(pid);
    if (it == running.end())
      continue;
    if (not WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failed++;
      std::cerr << "hybridio-sim sweep: run " << it->second + 1 << " failed, see "
                << (logdir / ("run-" + std::to_string(it->second + 1) + ".log")).string() << "\n";
    }
    running.erase(it);
    finished++;
    if (tty)
      std::fprintf(stderr, "\r  sweep: %zu / %zu runs done ", finished, cmds.size());
  }
  if (tty)
    std::fprintf(stderr, "\n");
  return failed;
}

std::string read_file(const fs::path& p)
{
  std::ifstream in(p);
  if (not in)
    throw std::runtime_error("cannot read '" + p.string() + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

int run_sweep(const std::string& self, const std::vector<std::string>& args)
{
  Grid grid;
  std::string out, mode = "local";
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> passthrough;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    auto val = [&](const std::string& opt) { return option_value(args, i, opt); };
    if (a == "--grid" || a.rfind("--grid=", 0) == 0) {
      std::string g = val("--grid");
      auto eq = g.find('=');
      if (eq == std::string::npos || eq == 0)
        throw std::runtime_error("--grid expects NAME=V1,V2,..., got '" + g + "'");
      auto values = split(g.substr(eq + 1), ',');
      if (values.empty())
        throw std::runtime_error("--grid " + g.substr(0, eq) + " has no values");
      grid.emplace_back(g.substr(0, eq), values);
    } else if (a == "--out" || a.rfind("--out=", 0) == 0) {
      out = val("--out");
    } else if (a == "--jobs" || a.rfind("--jobs=", 0) == 0) {
      jobs = std::stoi(val("--jobs"));
    } else if (a == "--mode" || a.rfind("--mode=", 0) == 0) {
      mode = val("--mode");
      if (mode != "local" && mode != "gnu-parallel" && mode != "slurm")
        throw std::runtime_error("--mode must be local, gnu-parallel or slurm, got '" + mode + "'");
    } else if (a == "--csv" || a == "--json" || a.rfind("--csv=", 0) == 0 || a.rfind("--json=", 0) == 0) {
      throw std::runtime_error("sweep writes each run's CSV and JSON itself under --out DIR");
    } else {
      passthrough.push_back(a);
    }
  }
  if (grid.empty())
    throw std::runtime_error("sweep needs at least one --grid NAME=V1,V2,...");
  if (out.empty())
    throw std::runtime_error("sweep needs --out DIR");
  fs::path dir = fs::absolute(out);
  fs::create_directories(dir / "runs");
  fs::create_directories(dir / "logs");
  std::string exe = self_exe(self);
  std::string tags;
  for (const auto& g : grid)
    tags += (tags.empty() ? "" : ",") + g.first;
  auto runs = expand_grid(grid);
  std::vector<std::string> cmds;
  for (size_t k = 0; k < runs.size(); k++) {
    std::string id = std::to_string(k + 1);
    id = std::string(id.size() < 5 ? 5 - id.size() : 0, '0') + id;
    std::string cmd = shell_quote(exe) + " run";
    for (const auto& a : passthrough)
      cmd += " " + shell_quote(a);
    for (const auto& [name, value] : runs[k])
      cmd += " " + shell_quote("--cfg=" + name + ":" + value);
    cmd += " --tags " + shell_quote(tags) + " --csv " + shell_quote((dir / "runs" / ("run-" + id + ".csv")).string()) +
           " --json " + shell_quote((dir / "runs" / ("run-" + id + ".json")).string());
    cmds.push_back(cmd);
  }
  {
    std::ofstream jl(dir / "jobs.txt");
    for (const auto& c : cmds)
      jl << c << "\n";
    std::ofstream sl(dir / "slurm.sh");
    sl << "#!/bin/bash\n"
       << "# Slurm job array over jobs.txt: sbatch " << (dir / "slurm.sh").string() << "\n"
       << "#SBATCH --job-name=hybridio-sim-sweep\n"
       << "#SBATCH --array=1-" << cmds.size() << "\n"
       << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
       << "#SBATCH --output=" << (dir / "logs" / "run-%a.log").string() << "\n"
       << "set -euo pipefail\n"
       << "eval \"$(sed -n \"${SLURM_ARRAY_TASK_ID}p\" " << shell_quote((dir / "jobs.txt").string()) << ")\"\n"
       << "# when every task is done: hybridio-sim merge " << dir.string() << "\n";
    fs::permissions(dir / "slurm.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
  }
  std::cout << "sweep: " << cmds.size() << " runs; job list " << (dir / "jobs.txt").string() << ", Slurm array "
            << (dir / "slurm.sh").string() << "\n";
  if (mode == "gnu-parallel") {
    std::cout << "run them with: parallel --jobs " << jobs << " < " << (dir / "jobs.txt").string()
              << "\nthen: hybridio-sim merge " << dir.string() << "\n";
    return 0;
  }
  if (mode == "slurm") {
    std::cout << "submit with: sbatch " << (dir / "slurm.sh").string() << "\nthen: hybridio-sim merge " << dir.string()
              << "\n";
    return 0;
  }
  int failed = run_local(cmds, std::max(1, jobs), dir / "logs");
  if (failed > 0)
    throw std::runtime_error(std::to_string(failed) + " of " + std::to_string(cmds.size()) + " runs failed");
  merge_results(dir.string());
  return 0;
}

void merge_results(const std::string& dir_name)
{
  fs::path dir(dir_name);
  if (not fs::is_directory(dir / "runs"))
    throw std::runtime_error("'" + dir_name + "' holds no runs/ directory (was it made by hybridio-sim sweep?)");
  std::vector<fs::path> csvs, jsons;
  for (const auto& e : fs::directory_iterator(dir / "runs")) {
    if (e.path().extension() == ".csv")
      csvs.push_back(e.path());
    else if (e.path().extension() == ".json")
      jsons.push_back(e.path());
  }
  std::sort(csvs.begin(), csvs.end());
  std::sort(jsons.begin(), jsons.end());
  if (csvs.empty())
    throw std::runtime_error("no run results in '" + (dir / "runs").string() + "'");
  std::ofstream csv(dir / "results.csv");
  std::string header;
  for (const auto& p : csvs) {
    std::istringstream in(read_file(p));
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
      if (first) {
        if (header.empty()) {
          header = line;
          csv << "run," << line << "\n";
        } else if (line != header) {
          throw std::runtime_error("'" + p.string() + "' has different columns from the other runs");
        }
        first = false;
        continue;
      }
      if (not line.empty())
        csv << p.stem().string() << "," << line << "\n";
    }
  }
  nlohmann::ordered_json merged = {{"schema", "hybridio-sim-sweep/1"}, {"runs", nlohmann::ordered_json::array()}};
  for (const auto& p : jsons) {
    nlohmann::ordered_json output;
    try {
      output = nlohmann::ordered_json::parse(read_file(p));
    } catch (const nlohmann::ordered_json::parse_error& e) {
      throw std::runtime_error("'" + p.string() + "' is not JSON: " + e.what());
    }
    merged["runs"].push_back({{"run", p.stem().string()}, {"output", std::move(output)}});
  }
  std::ofstream(dir / "results.json") << merged.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                                      << "\n";
  std::cout << "merged " << csvs.size() << " runs into " << (dir / "results.csv").string() << " and "
            << (dir / "results.json").string() << "\n";
}

} // namespace hiosim
