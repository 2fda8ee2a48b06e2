// A translation unit of the generate layer that reaches up for a header of the run layer: it must not
// compile, because einfuzz::generate's include path holds only its own and lower layers' headers.
#include "einfuzz/harness/run.hpp"
