// A chapter's step table: one Step type for every track.
//
//   const std::vector<rd::Step> kSteps = {
//       {"interleaved-modulo", launch_interleaved_modulo, depth_shared},
//       {"sequential", launch_sequential, depth_shared},
//   };
//
// A track names its Step as bench::Step<its launcher type, what else it needs>:
// the reduction's rd::Step is Step<void (*)(const Sum&), Depth> (an error bound per
// step), the transpose's Step<Launch<T>> needs nothing more. The program main
// (common/bench/program.h) lists the names for --list and --variant and hands the
// chosen steps to the problem.
#pragma once

#include <string>
#include <vector>

namespace sw::bench {

struct Nothing {};  // a Step that needs nothing beyond its launcher

template <class Launch, class More = Nothing>
struct Step {
  const char* name;  // the row's name; its launcher is launch_<name>
  Launch launch;     // one whole call of the step: it holds the <<<>>> (or the library call)
  More more = {};    // what the track needs beside it (an error bound, a tile, ...)
  const char* role = "step";  // "step", "anti-example", "vendor", "ceiling"
  unsigned traits = 0;        // the track's flags (e.g. rd::kSameBits)
};

template <class S>
std::vector<std::string> names(const std::vector<S>& steps) {
  std::vector<std::string> out;
  for (const S& s : steps) out.push_back(s.name);
  return out;
}

// The steps that --variant chose: all of them for "all", else the one of that name.
template <class S>
std::vector<S> chosen(const std::vector<S>& steps, const std::string& variant) {
  std::vector<S> out;
  for (const S& s : steps)
    if (variant == "all" || variant == s.name) out.push_back(s);
  return out;
}

}  // namespace sw::bench
