// api_pages.cc - see api_pages.h.
#include "api_pages.h"

#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "roff.h"

namespace hybridio::man {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// One line of a comment without its marks: "/*", "*/", a leading "*" or "//".
std::string comment_line(std::string line) {
  line = trim(line);
  if (starts_with(line, "/*")) line = line.substr(2);
  if (starts_with(line, "//")) line = line.substr(2);
  size_t end = line.find("*/");
  if (end != std::string::npos) line.resize(end);
  line = trim(line);
  if (starts_with(line, "*")) line = trim(line.substr(1));
  return line;
}

// "ssize_t hio_pread(hio_file *f, void *buf, ...)" (marks stripped) into *out.
bool parse_declaration(const std::string& decl, ApiFunction* out) {
  size_t open = decl.find('(');
  size_t close = decl.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  size_t name_end = open;
  while (name_end > 0 && decl[name_end - 1] == ' ') --name_end;
  size_t name_begin = name_end;
  while (name_begin > 0 && ident_char(decl[name_begin - 1])) --name_begin;
  out->name = decl.substr(name_begin, name_end - name_begin);
  out->return_type = trim(decl.substr(0, name_begin));
  if (out->name.empty() || out->return_type.empty()) return false;
  std::string params = trim(decl.substr(open + 1, close - open - 1));
  out->params.clear();
  if (params == "void") return true;
  std::stringstream in(params);
  std::string p;
  while (std::getline(in, p, ',')) {
    p = trim(p);
    size_t b = p.size();
    while (b > 0 && ident_char(p[b - 1])) --b;
    std::string type = trim(p.substr(0, b)), name = p.substr(b);
    if (type.empty() || name.empty()) return false;
    if (type.back() != '*') type += ' ';
    out->params.emplace_back(type, name);
  }
  return true;
}

// The comment as roff paragraphs.
std::string paragraphs(const std::string& plain) {
  std::string out;
  std::stringstream in(plain);
  std::string line;
  bool need_break = false;
  while (std::getline(in, line)) {
    if (line.empty()) {
      need_break = !out.empty();
      continue;
    }
    if (need_break) out += ".PP\n";
    need_break = false;
    out += text(line) + "\n";
  }
  return out;
}

std::string synopsis(const ApiFunction& f) {
  std::string head = f.return_type + (f.return_type.back() == '*' ? "" : " ") + f.name + "(";
  if (f.params.empty()) return ".B \"" + word(head) + "void);\"\n";
  std::string line = ".BI \"" + word(head);
  for (size_t i = 0; i < f.params.size(); ++i) {
    line += (i ? ", " : "") + word(f.params[i].first) + "\" " + word(f.params[i].second) + " \"";
  }
  return line + ");\"\n";
}

std::string reference(const std::string& ref) {
  size_t paren = ref.find('(');
  if (paren == std::string::npos) return ".BR " + word(ref) + " (3)";
  return ".BR " + word(ref.substr(0, paren)) + " " + ref.substr(paren);
}

}  // namespace

bool scan_header(const std::string& path, const std::string& header, std::vector<ApiFunction>* out,
                 std::string* error) {
  std::string source;
  if (!read_file(path, &source)) {
    *error = "cannot read " + path;
    return false;
  }
  std::vector<std::string> lines;
  std::stringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  std::string comment;  // the comment block just above, kept across a group of declarations
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string t = trim(lines[i]);
    if (starts_with(t, "/*") || starts_with(t, "//")) {
      comment.clear();
      bool block = starts_with(t, "/*");
      for (;; ++i) {
        std::string l = comment_line(lines[i]);
        comment += l + "\n";
        if (block ? lines[i].find("*/") != std::string::npos
                  : i + 1 >= lines.size() || !starts_with(trim(lines[i + 1]), "//"))
          break;
        if (i + 1 >= lines.size()) break;
      }
      // The file's opening comment describes the header, not a function.
      if (comment.find(header + " - ") != std::string::npos) comment.clear();
      continue;
    }
    bool exported = starts_with(t, "HIO_API ");
    bool inline_fn = starts_with(t, "static inline ");
    if (!exported && !inline_fn) {
      comment.clear();
      continue;
    }
    std::string decl = t.substr(exported ? 8 : 14);
    while (decl.find(')') == std::string::npos && i + 1 < lines.size()) decl += " " + trim(lines[++i]);
    ApiFunction f;
    f.header = header;
    f.comment = comment;
    if (!parse_declaration(decl, &f)) {
      *error = path + ":" + std::to_string(i + 1) + ": cannot read the declaration '" + decl + "'";
      return false;
    }
    out->push_back(f);
    if (inline_fn) {  // skip the body; a comment inside it belongs to no function
      int depth = 0;
      bool opened = false;
      for (; i < lines.size(); ++i) {
        for (char c : lines[i]) {
          if (c == '{') ++depth, opened = true;
          if (c == '}') --depth;
        }
        if (opened && depth == 0) break;
      }
      comment.clear();
    }
  }
  return true;
}

bool parse_notes(const std::string& notes_text, std::vector<ApiNotes>* out, std::string* error) {
  std::stringstream in(notes_text);
  std::string line;
  int number = 0;
  ApiNotes* cur = nullptr;
  while (std::getline(in, line)) {
    ++number;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t sp = t.find(' ');
    std::string key = t.substr(0, sp), value = sp == std::string::npos ? "" : trim(t.substr(sp + 1));
    auto fail = [&](const std::string& why) {
      *error = "api_notes.txt:" + std::to_string(number) + ": " + why;
      return false;
    };
    auto append = [](std::string* field, const std::string& v) {
      if (v.empty())
        *field += "\n\n";  // the key alone: a new paragraph
      else
        *field += (field->empty() || field->back() == '\n' ? "" : "\n") + v;
    };
    if (key == "function" || key == "internal") {
      if (value.empty()) return fail(key + " needs a name");
      out->push_back({});
      cur = &out->back();
      cur->name = value;
      cur->internal = key == "internal";
      continue;
    }
    if (!cur) return fail("'" + key + "' before any 'function NAME'");
    if (key == "summary")
      cur->summary = value;
    else if (key == "description")
      append(&cur->description, value);
    else if (key == "return")
      append(&cur->return_value, value);
    else if (key == "note")
      append(&cur->notes, value);
    else if (key == "error") {
      size_t e = value.find(' ');
      if (e == std::string::npos) return fail("error needs an errno name and a text");
      cur->errors.emplace_back(value.substr(0, e), trim(value.substr(e + 1)));
    } else if (key == "see") {
      std::stringstream refs(value);
      for (std::string r; refs >> r;) cur->see_also.push_back(r);
    } else {
      return fail("unknown key '" + key + "'");
    }
  }
  return true;
}

bool write_api_pages(const std::vector<ApiFunction>& functions, const std::vector<ApiNotes>& notes,
                     const std::string& version, const std::string& out_dir, std::string* index,
                     std::string* error) {
  std::map<std::string, const ApiNotes*> by_name;
  for (const ApiNotes& n : notes)
    if (!by_name.emplace(n.name, &n).second) {
      *error = "api_notes.txt: " + n.name + " has two blocks";
      return false;
    }
  std::set<std::string> declared, paged;
  for (const ApiFunction& f : functions) {
    declared.insert(f.name);
    auto n = by_name.find(f.name);
    if (n == by_name.end()) {
      *error = f.header + ": " + f.name + " has no block in man/api_notes.txt (function, or internal for a helper)";
      return false;
    }
    if (!n->second->internal) paged.insert(f.name);
  }
  for (const ApiNotes& n : notes) {
    if (!declared.count(n.name)) {
      *error = "api_notes.txt: " + n.name + " is declared in no public header";
      return false;
    }
    for (const std::string& r : n.see_also)
      if (r.find('(') == std::string::npos && !paged.count(r)) {
        *error = "api_notes.txt: " + n.name + " refers to " + r + ", which has no page";
        return false;
      }
  }

  std::string last_header;
  for (const ApiFunction& f : functions) {
    const ApiNotes& n = *by_name[f.name];
    if (n.internal) continue;
    auto fail = [&](const std::string& why) {
      *error = "api_notes.txt: " + f.name + ": " + why;
      return false;
    };
    if (n.summary.empty()) return fail("no summary");
    if (f.comment.empty() && n.description.empty()) return fail("no comment in the header and no description");
    if (f.return_type != "void" && n.return_value.empty()) return fail("returns " + f.return_type + ": no return");

    std::string page;
    page += ".\\\" Generated by hybridio_mangen from " + f.header + " and man/api_notes.txt; do not edit.\n";
    page += ".TH " + word(f.name) + " 3 \"\" \"libhybridio " + version + "\" \"libhybridio Manual\"\n";
    page += ".SH NAME\n" + word(f.name) + " \\- " + text(n.summary) + "\n";
    page += ".SH SYNOPSIS\n.nf\n.B #include <" + f.header + ">\n.PP\n" + synopsis(f) + ".fi\n";
    page += ".SH DESCRIPTION\n" + paragraphs(f.comment);
    if (!f.comment.empty() && !n.description.empty()) page += ".PP\n";
    page += paragraphs(n.description);
    if (!n.return_value.empty()) page += ".SH RETURN VALUE\n" + paragraphs(n.return_value);
    if (!n.errors.empty()) {
      page += ".SH ERRORS\n";
      for (const auto& [code, when] : n.errors) page += ".TP\n.B " + word(code) + "\n" + text(when) + "\n";
    }
    if (!n.notes.empty()) page += ".SH NOTES\n" + paragraphs(n.notes);
    page += ".SH SEE ALSO\n.BR libhybridio (3)";
    for (const std::string& r : n.see_also) page += ",\n" + reference(r);
    page += "\n";
    if (!write_file(out_dir + "/" + f.name + ".3", page)) return fail("cannot write its page in " + out_dir);

    if (f.header != last_header) *index += ".SS <" + f.header + ">\n";
    last_header = f.header;
    *index += ".TP\n.BR " + word(f.name) + " (3)\n" + text(n.summary) + "\n";
  }
  return true;
}

}  // namespace hybridio::man
