#include "net/http_response.h"

#include <cstdio>

#include "net/http_parser.h"

namespace vsc::net {

std::string_view HttpResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return {};
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string SerializeResponse(const HttpResponse& r, bool keep_alive, bool include_body) {
  std::string out = SerializeHead(r, r.body.size(), keep_alive);
  // 1xx, 204 and 304 never carry a body.
  const bool bodyless = r.status < 200 || r.status == 204 || r.status == 304;
  if (include_body && !bodyless) out += r.body;
  return out;
}

std::string SerializeHead(const HttpResponse& r, uint64_t content_length, bool keep_alive) {
  std::string out;
  out.reserve(128 + r.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(r.status);
  out += ' ';
  out += ReasonPhrase(r.status);
  out += "\r\n";
  if (!r.content_type.empty()) {
    out += "Content-Type: ";
    out += r.content_type;
    out += "\r\n";
  }
  // 1xx, 204 and 304 never carry a body or a length.
  const bool bodyless = r.status < 200 || r.status == 204 || r.status == 304;
  if (!bodyless) {
    out += "Content-Length: ";
    out += std::to_string(content_length);
    out += "\r\n";
  }
  out += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  for (const auto& [k, v] : r.headers) {
    if (EqualsIgnoreCase(k, "content-length") || EqualsIgnoreCase(k, "connection") ||
        EqualsIgnoreCase(k, "transfer-encoding") ||
        (!r.content_type.empty() && EqualsIgnoreCase(k, "content-type"))) {
      continue;
    }
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  out += "\r\n";
  return out;
}

HttpResponse JsonError(int status, std::string_view message) {
  HttpResponse r;
  r.status = status;
  std::string body = "{\"error\":\"";
  for (unsigned char c : message) {
    switch (c) {
      case '"':
        body += "\\\"";
        break;
      case '\\':
        body += "\\\\";
        break;
      case '\n':
        body += "\\n";
        break;
      case '\r':
        body += "\\r";
        break;
      case '\t':
        body += "\\t";
        break;
      default:
        if (c < 0x20 || c >= 0x7F) {  // bytes of a malformed request stay valid JSON
          char esc[8];
          std::snprintf(esc, sizeof(esc), "\\u%04x", c);
          body += esc;
        } else {
          body += static_cast<char>(c);
        }
    }
  }
  body += "\"}\n";
  r.body = std::move(body);
  return r;
}

}  // namespace vsc::net
