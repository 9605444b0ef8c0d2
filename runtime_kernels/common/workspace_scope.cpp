#include "common/workspace_scope.h"

namespace halconv::rk {

namespace {

thread_local Workspace installed;

}  // namespace

WorkspaceScope::WorkspaceScope(Workspace workspace) : previous_(installed) {
    installed = workspace;
}

WorkspaceScope::~WorkspaceScope() {
    installed = previous_;
}

Workspace current_workspace() {
    return installed;
}

}  // namespace halconv::rk
