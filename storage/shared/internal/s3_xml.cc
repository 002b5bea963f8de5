#include "storage/shared/internal/s3_xml.h"

#include <cstdint>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "serde/utf8.h"

namespace backfill::shared_internal {
namespace {

// A short, printable excerpt of `text` for messages.
std::string Excerpt(absl::string_view text) {
  constexpr size_t kMax = 80;
  std::string out = absl::CHexEscape(text.substr(0, kMax));
  if (text.size() > kMax) out += "...";
  return out;
}

absl::Status Malformed(absl::string_view what, absl::string_view where) {
  return absl::DataLossError(
      absl::StrCat("malformed S3 ListObjectsV2 response: ", what, " at \"",
                   Excerpt(where), "\""));
}

// Finds the element <name>...</name> at or after `*pos` in `xml`; returns
// its raw content and moves `*pos` past it. nullopt if there is none;
// `*unterminated` set if the start tag has no end tag. Attributes on the
// start tag (`<Name xmlns="...">`) are allowed; `<NameOther>` is not
// mistaken for `<Name>`.
std::optional<absl::string_view> FindElement(absl::string_view xml,
                                             absl::string_view name,
                                             size_t* pos, bool* unterminated) {
  *unterminated = false;
  const std::string open = absl::StrCat("<", name);
  const std::string close = absl::StrCat("</", name, ">");
  size_t at = *pos;
  while (true) {
    at = xml.find(open, at);
    if (at == absl::string_view::npos) return std::nullopt;
    size_t after = at + open.size();
    if (after < xml.size() && (xml[after] == '>' || xml[after] == ' ')) {
      size_t content_start = xml.find('>', after);
      if (content_start == absl::string_view::npos) {
        *unterminated = true;
        return std::nullopt;
      }
      ++content_start;
      if (xml[content_start - 2] == '/') {  // <Name/>: empty
        *pos = content_start;
        return absl::string_view();
      }
      size_t end = xml.find(close, content_start);
      if (end == absl::string_view::npos) {
        *unterminated = true;
        *pos = at;
        return std::nullopt;
      }
      *pos = end + close.size();
      return xml.substr(content_start, end - content_start);
    }
    at = after;
  }
}

}  // namespace

absl::StatusOr<std::string> DecodeXmlText(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out.push_back(text[i]);
      continue;
    }
    size_t semicolon = text.find(';', i);
    if (semicolon == absl::string_view::npos || semicolon - i > 12) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unterminated XML entity at \"", Excerpt(text.substr(i)), "\""));
    }
    absl::string_view entity = text.substr(i + 1, semicolon - i - 1);
    if (entity == "amp") {
      out.push_back('&');
    } else if (entity == "lt") {
      out.push_back('<');
    } else if (entity == "gt") {
      out.push_back('>');
    } else if (entity == "quot") {
      out.push_back('"');
    } else if (entity == "apos") {
      out.push_back('\'');
    } else if (entity.size() > 1 && entity[0] == '#') {
      uint32_t code = 0;
      bool ok = entity[1] == 'x' || entity[1] == 'X'
                    ? absl::SimpleHexAtoi(entity.substr(2), &code)
                    : absl::SimpleAtoi(entity.substr(1), &code);
      if (!ok || code == 0 || code > 0x10FFFF) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad XML character reference &", entity, ";"));
      }
      AppendUtf8(code, &out);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown XML entity &", entity, ";"));
    }
    i = semicolon;
  }
  return out;
}

absl::StatusOr<ListObjectsPage> ParseListObjectsV2(absl::string_view xml) {
  size_t pos = 0;
  bool unterminated = false;
  std::optional<absl::string_view> root =
      FindElement(xml, "ListBucketResult", &pos, &unterminated);
  if (!root.has_value()) {
    return Malformed(unterminated ? "unterminated <ListBucketResult>"
                                  : "no <ListBucketResult>",
                     xml);
  }
  ListObjectsPage page;
  // The top-level fields come after or between <Contents> elements; search
  // the root with the <Contents> removed, so a (hypothetical) nested
  // <IsTruncated> cannot be mistaken for the page's.
  std::string top_level;
  size_t contents_pos = 0;
  size_t copied = 0;
  while (true) {
    size_t start = root->find("<Contents>", contents_pos);
    std::optional<absl::string_view> contents =
        FindElement(*root, "Contents", &contents_pos, &unterminated);
    if (!contents.has_value()) {
      if (unterminated) return Malformed("unterminated <Contents>", *root);
      break;
    }
    absl::StrAppend(&top_level, root->substr(copied, start - copied));
    copied = contents_pos;
    size_t field_pos = 0;
    std::optional<absl::string_view> key =
        FindElement(*contents, "Key", &field_pos, &unterminated);
    if (!key.has_value())
      return Malformed("<Contents> without <Key>", *contents);
    field_pos = 0;
    std::optional<absl::string_view> size =
        FindElement(*contents, "Size", &field_pos, &unterminated);
    uint64_t size_value = 0;
    if (!size.has_value() || !absl::SimpleAtoi(*size, &size_value)) {
      return Malformed("<Contents> without a numeric <Size>", *contents);
    }
    absl::StatusOr<std::string> decoded_key = DecodeXmlText(*key);
    if (!decoded_key.ok()) {
      return Malformed(decoded_key.status().message(), *key);
    }
    page.objects.push_back(ObjectInfo{*std::move(decoded_key), size_value});
  }
  absl::StrAppend(&top_level, root->substr(copied));

  size_t field_pos = 0;
  std::optional<absl::string_view> truncated =
      FindElement(top_level, "IsTruncated", &field_pos, &unterminated);
  if (!truncated.has_value() ||
      (*truncated != "true" && *truncated != "false")) {
    return Malformed("no <IsTruncated>true|false</IsTruncated>", top_level);
  }
  page.is_truncated = *truncated == "true";
  field_pos = 0;
  std::optional<absl::string_view> token = FindElement(
      top_level, "NextContinuationToken", &field_pos, &unterminated);
  if (token.has_value()) {
    absl::StatusOr<std::string> decoded = DecodeXmlText(*token);
    if (!decoded.ok()) return Malformed(decoded.status().message(), *token);
    page.next_continuation_token = *std::move(decoded);
  }
  if (page.is_truncated && page.next_continuation_token.empty()) {
    return Malformed("truncated page without <NextContinuationToken>",
                     top_level);
  }
  return page;
}

S3Error ParseS3Error(absl::string_view xml) {
  S3Error error;
  size_t pos = 0;
  bool unterminated = false;
  std::optional<absl::string_view> root =
      FindElement(xml, "Error", &pos, &unterminated);
  if (!root.has_value()) return error;
  for (auto [name, field] :
       {std::pair<absl::string_view, std::string*>{"Code", &error.code},
        {"Message", &error.message}}) {
    size_t field_pos = 0;
    std::optional<absl::string_view> text =
        FindElement(*root, name, &field_pos, &unterminated);
    if (!text.has_value()) continue;
    absl::StatusOr<std::string> decoded = DecodeXmlText(*text);
    *field = decoded.ok() ? *std::move(decoded) : std::string(*text);
  }
  return error;
}

}  // namespace backfill::shared_internal
