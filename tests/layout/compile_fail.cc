// Declarations that must be rejected at compile time. CTest compiles this file once per case
// (PURLIN_CASE) and passes only when the compiler prints the expected diagnostic; case 0 must
// compile, which proves the harness (flags, include paths) is not what fails.
#include "layout/collectives.h"

namespace purlin::layout {

#if PURLIN_CASE == 0
struct Fine : compose<ReduceScatter, AllGather> {};
#elif PURLIN_CASE == 1
struct Mismatched : compose<AllGather, AllGather> {};  // scattered output into a packed input
#elif PURLIN_CASE == 2
struct FixedIntoV : compose<ReduceScatter, AllGatherV> {};
#elif PURLIN_CASE == 3
struct NoSource : Collective<ConsumeOp::copy, Scattered, Packed> {};  // Scatter without a root
#elif PURLIN_CASE == 4
struct MixedV : Collective<ConsumeOp::copy, Packed, ScatteredV> {};
#elif PURLIN_CASE == 5
struct TwoRoots : compose<Scatter, Gather> {};
#endif

}  // namespace purlin::layout

int main() { return 0; }
