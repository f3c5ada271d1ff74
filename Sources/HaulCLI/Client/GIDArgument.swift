import ArgumentParser

/// GIDs on the command line: aria2's 16 hex digits, or a unique prefix of them (the daemon
/// resolves prefixes). Checked before anything is sent, so that a typo is a usage error (2),
/// not a refusal from the daemon.
enum GIDArgument {
    static func validate(_ gids: [String]) throws {
        for gid in gids where gid.isEmpty || gid.count > 16 || !gid.allSatisfy(\.isHexDigit) {
            throw ValidationError("'\(gid)' is not a GID: a GID is 16 hexadecimal digits (or a unique prefix of them)")
        }
    }
}
