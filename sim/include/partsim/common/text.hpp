// Text safety at the edge: UTF-8 validation of input, and escaping so that a message is one printable line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace partsim {

/** Byte offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or nullopt when all of `text` is well formed. */
std::optional<std::size_t> invalid_utf8_at(std::string_view text);

/** `text` with every byte that could break a one-line message escaped: ASCII control characters (newline, escape,
 * NUL, ...) and DEL as `\n`, `\t`, `\r` or `\xNN`, C1 controls (U+0080 to U+009F, which terminals also obey) as
 * `\u0080` style, and bytes that are not UTF-8 as `\xNN`. Printable text, including non-ASCII letters, is kept, so
 * the result of escaping an escaped text is the same text. Past `max_bytes` of output the rest is cut and
 * replaced by "..." (at a character boundary). */
std::string printable(std::string_view text, std::size_t max_bytes = 1000);

} // namespace partsim
