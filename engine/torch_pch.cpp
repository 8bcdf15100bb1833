// Anchor translation unit for the shared torch precompiled header (engine/torch_pch.h).
// Nothing else lives here; the modules that use torch reuse this target's PCH.
#include "engine/torch_pch.h"
