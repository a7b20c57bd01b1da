// The stored form of a JSON Lines record (the document store's bytes of a document): the record
// itself, or a JSON object of some of its top-level fields, each value kept as the exact bytes
// it had in the record (numbers, nested objects and escapes round-trip untouched).
//
// Both readers of the index writer call this on the same line bytes (the C++ reader on its
// worker threads, mirkit.ingest's Python reader through the binding), so their stores are
// byte-identical. The record was already accepted as a JSON object by one of them, so the scan
// below only needs to find the top-level keys and the extent of each value: it tracks strings
// and bracket depth, and does not validate (Python's json also takes NaN and Infinity, which
// the scan skips like any bare token).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mirkit::index {

// JSON's whitespace (space, tab, '\n', '\r') trimmed from both ends of line.
std::string_view trim_json_space(std::string_view line);

// Appends to `out` the stored form of the JSON object `line`: with `fields` null, the trimmed
// line; else '{' then, for each name of *fields present in the object (the last occurrence of a
// repeated key, as Python's json keeps it), in the order of *fields, "name":value, joined by
// ',', then '}'. Throws std::invalid_argument if line is not a JSON object (a bug of the caller:
// only records a reader took come here).
void stored_record(std::string_view line, const std::vector<std::string>* fields,
                   std::string& out);

// Appends to `out` the text of the stored record (a JSON object) to snippet: the string values
// of `text_fields` that are present and not empty, in that order, decoded, joined by '\n' (as
// mirkit.ingest joins the text fields of a record).
void stored_text(std::string_view record, const std::vector<std::string>& text_fields,
                 std::string& out);

// `name` as a JSON string literal, quotes included ('"', '\\' and control characters escaped).
void append_json_string(std::string_view name, std::string& out);

}  // namespace mirkit::index
