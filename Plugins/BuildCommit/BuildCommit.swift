// Records the git commit of the checkout a target is built from, at build time, so that a
// binary reports the commit it was built from wherever it runs (a run's `commit=` line and the
// results' `git_commit` column). Before 2026-11-27 `syncsim` asked git at run time, from the
// directory it was started in, which named the wrong commit for a binary built in another
// checkout (a baseline built in a git worktree, say).
//
// A prebuild command runs before every build: it writes `BuildCommit.swift` with the
// checkout's HEAD (12 hex digits, "+dirty" when tracked files have changes, "unknown" outside
// a git checkout or without git), and replaces the file only when that text changes, so an
// unchanged commit costs no recompilation.

import Foundation
import PackagePlugin

@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        let script = #"""
            set -u
            checkout=$1
            out=$2/BuildCommit.swift
            mkdir -p "$2"
            head=$(git -C "$checkout" rev-parse --short=12 HEAD 2>/dev/null) || head=unknown
            if [ "$head" != unknown ] \
                && [ -n "$(git -C "$checkout" status --porcelain --untracked-files=no 2>/dev/null)" ]
            then
                head="$head+dirty"
            fi
            text="/// The git commit this build was made from (written by the BuildCommit plugin).
            let buildCommit = \"$head\""
            if [ ! -f "$out" ] || [ "$(cat "$out")" != "$text" ]; then
                printf '%s\n' "$text" > "$out.tmp" && mv "$out.tmp" "$out"
            fi
            """#
        return [
            .prebuildCommand(
                displayName: "Recording the git commit of \(target.name)",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", script, "sh", context.package.directoryURL.path(), output.path()],
                outputFilesDirectory: output)
        ]
    }
}
