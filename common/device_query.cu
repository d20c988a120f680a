// device_query: prints the banner every chapter prints (name, SMs, memory, L2,
// theoretical and measured copy bandwidth). The tour runs it first.
//   build/common/device_query [--json]
#include "device.h"
#include "report.h"

int main(int argc, char** argv) {
  sw::Cli cli("device_query", "The GPU's properties and its measured copy bandwidth.");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  return opt.verify_only || gpu.copy_gbps > 0 ? sw::kExitOk : sw::kExitFailed;
}
