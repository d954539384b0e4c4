/* sweep: `hybridio-sim sweep` expands a parameter grid into independent runs of hybridio-sim,
 * writes them as a job list (DIR/jobs.txt, one shell command per line) and a Slurm job-array
 * script (DIR/slurm.sh), and either runs them here, --jobs at a time, or leaves them to GNU
 * parallel or Slurm. `merge` joins the CSV and JSON files of DIR/runs into DIR/results.csv and
 * DIR/results.json. Errors are thrown as std::runtime_error. */
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace hiosim {

using Grid = std::vector<std::pair<std::string, std::vector<std::string>>>;

/* Cartesian product of the grid, first axis slowest. */
std::vector<std::vector<std::pair<std::string, std::string>>> expand_grid(const Grid& grid);
std::string shell_quote(const std::string& s);
int run_sweep(const std::string& self, const std::vector<std::string>& args);
void merge_results(const std::string& dir);

} // namespace hiosim
