/* config: the --cfg flags of hybridio-sim (simgrid::config::Flag), description files, validation.
 * Every model parameter has one flag; a description file sets the same names, one per line
 * ("name = value", '#' comments) and never overrides a flag given on the command line.
 * Errors are thrown as ConfigError with a message naming the field and where it was set. */
#pragma once
#include "params.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace hiosim {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/* Loads a description file into the flags; throws ConfigError naming file, line and field. */
void load_description_file(const std::string& path);
/* Reads all flags into Params, checks ranges and cross-field rules; throws ConfigError. */
Params params_from_config();
/* Sets one flag by name (used by calibrate); throws ConfigError on an unknown name. */
void set_flag(const std::string& name, const std::string& value);
/* "name: value" lines of every flag that differs from its default (echoed into JSON). */
std::vector<std::pair<std::string, std::string>> non_default_flags();
std::vector<std::pair<std::string, std::string>> all_flags();
/* --help text for the model flags. */
std::string flags_help();
bool is_model_flag(const std::string& name);

/* A subcommand option's value: "--opt=VALUE", or "--opt VALUE" (then `i`
 * moves past it); throws ConfigError when the value is missing. */
std::string option_value(const std::vector<std::string>& args, size_t& i, const std::string& opt);

} // namespace hiosim
