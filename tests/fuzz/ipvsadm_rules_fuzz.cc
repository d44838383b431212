// Fuzzes the ipvsadm surface: the rules-file parser and restore (ipvsadm -R), and the
// command-line parser (ipvsadm's argv). Beyond not crashing, checks the properties they promise:
// a restore that succeeds saves to a file that restores to an equal table and saves
// identically; a restore that fails leaves the table untouched; a parsed table command applies
// to a table or fails without changing it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "vservice/ipvsadm_args.h"
#include "vservice/ipvsadm_rules.h"
#include "vservice/virtual_service_table.h"

using namespace vsc::vservice;

namespace {

constexpr TableLimits kLimits{64, 64};

void CheckRestore(std::string_view text) {
  VirtualServiceTable table(kLimits);
  auto restored = RestoreRules(table, text);
  if (!restored.ok()) {
    if (!table.services().empty()) std::abort();  // a failed restore changed the table
    return;
  }
  const std::string saved = SaveRules(table);
  VirtualServiceTable again(kLimits);
  if (!RestoreRules(again, saved).ok()) std::abort();
  if (!(again == table) || SaveRules(again) != saved) std::abort();
}

// The input's words (split on whitespace and NUL) as one argv.
void CheckArgs(std::string_view text) {
  std::vector<std::string> args;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\0') {
      if (!word.empty()) args.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) args.push_back(std::move(word));
  auto cmd = ParseArgs(args);
  if (!cmd.ok()) return;
  VirtualServiceTable table(kLimits);
  (void)RestoreRules(table, "-A -t 10.0.0.1:80\n-A -u 10.0.0.1:53\n-a -t 10.0.0.1:80 -r 10.0.1.1\n");
  const VirtualServiceTable before = table;
  if (!Apply(table, *cmd).ok() && !(table == before)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckRestore(text);
  CheckArgs(text);
  return 0;
}
