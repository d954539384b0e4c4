// roff.h - what the man-page generator (mangen.cc) writes roff with: text
// escaped for groff's man macros, and page templates (man/pages/*.in) filled
// in.  Single-threaded, allocation is not a concern; errors are returned.
#pragma once

#include <map>
#include <string>

namespace hybridio::man {

// Prose for a filled paragraph: backslashes and leading dots/quotes made
// harmless, a hyphen that starts a word ("--size", "-1") written as \- (a
// minus, as options must be), a hyphen inside a word ("memory-mapped") kept,
// and `code` set in italics (parameters, as the header comments write them).
std::string text(const std::string& s);

// A literal word set in a font (option names, function names, types):
// every hyphen is \-, quotes for a macro argument are not added.
std::string word(const std::string& s);

// Fills a template: a line that is exactly "@NAME@" is replaced by the
// block values["NAME"] (which ends in a newline), and "@NAME@" within a
// line by values["NAME"].  Fails, naming the placeholder, when the template
// uses a name that has no value or a value is never used: a table that
// lost its place on the page is an error, not a quiet omission.
bool fill_template(const std::string& tmpl, const std::map<std::string, std::string>& values, std::string* out,
                   std::string* error);

// Whole files, for the generator.
bool read_file(const std::string& path, std::string* out);
bool write_file(const std::string& path, const std::string& data);

}  // namespace hybridio::man
