// api_pages.h - the section 3 pages, one per function of the public C
// headers (hybridio/hybridio.h, hybridio/policy.h), in liburing's manner:
// NAME, SYNOPSIS, DESCRIPTION (the comment above the declaration in the
// header, then the notes), RETURN VALUE, ERRORS, SEE ALSO.
//
// The header is the table: every HIO_API declaration and every static
// inline function is found by scanning it, so a new function cannot miss
// its page.  What a header comment does not say lives in api_notes.txt, one
// block per function; a function without a block, or a block naming no
// function, is an error.  Single-threaded; errors are returned as text.
#pragma once

#include <string>
#include <vector>

namespace hybridio::man {

struct ApiFunction {
  std::string header;       // "hybridio/hybridio.h"
  std::string return_type;  // "ssize_t", "enum hio_path"
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;  // (type, name); empty for (void)
  std::string comment;      // the comment above it (or above its group), without the comment marks
};

// Every function declared in `path` (shown as `header`), in header order.
bool scan_header(const std::string& path, const std::string& header, std::vector<ApiFunction>* out,
                 std::string* error);

struct ApiNotes {
  std::string name;
  bool internal = false;  // a helper of the header's own inline code: no page
  std::string summary;    // NAME line
  std::string description, return_value, notes;
  std::vector<std::pair<std::string, std::string>> errors;  // (ERRNO, when)
  std::vector<std::string> see_also;  // "hio_close" (section 3) or "open(2)"
};

// Parses api_notes.txt (format in its opening comment).
bool parse_notes(const std::string& text, std::vector<ApiNotes>* out, std::string* error);

// Writes <out_dir>/<name>.3 for every function with a page and returns, in
// *index, the list for libhybridio(3) (.TP entries, header by header).
// Fails when a function and the notes do not match one to one.
bool write_api_pages(const std::vector<ApiFunction>& functions, const std::vector<ApiNotes>& notes,
                     const std::string& version, const std::string& out_dir, std::string* index,
                     std::string* error);

}  // namespace hybridio::man
