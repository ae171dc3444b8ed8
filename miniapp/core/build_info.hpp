#pragma once
// What this binary was built from. The commit lives in one generated unit
// (cmake/GitCommit.cmake), so a new commit recompiles that unit only.

namespace miniapp {

// The short commit hash, with "-dirty" when tracked files differed from it; "unknown" outside git.
const char* git_commit();

}  // namespace miniapp
