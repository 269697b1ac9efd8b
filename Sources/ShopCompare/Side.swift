/// One side of a comparison: an environment and user read now, or a file (a snapshot, or a HAR
/// written by `--har`). Written `env:NAME`, `user:ID`, `env:NAME/user:ID`, or a path.
public enum CompareSide: Equatable, Sendable, CustomStringConvertible {
    /// Read now, from `env` (nil: the environment in use) as `user` (nil: that environment's user).
    case live(env: String?, user: String?)
    case file(String)

    /// Text that starts like a live side but is not one (`env:` with no name, `env:a/x`).
    public struct Malformed: Error, Equatable, Sendable, CustomStringConvertible {
        public let text: String
        public var description: String { "“\(text)”: write a side as env:NAME, user:ID or env:NAME/user:ID" }
    }

    /// Reads the text's form only: whether a file exists is for whoever opens it.
    public static func parse(_ text: String) throws(Malformed) -> CompareSide {
        guard text.hasPrefix("env:") || text.hasPrefix("user:") else { return .file(text) }
        var env: String?, user: String?
        for part in text.split(separator: "/", omittingEmptySubsequences: false) {
            if part.hasPrefix("env:"), env == nil, !part.dropFirst(4).isEmpty { env = String(part.dropFirst(4)) }
            else if part.hasPrefix("user:"), user == nil, !part.dropFirst(5).isEmpty { user = String(part.dropFirst(5)) }
            else { throw Malformed(text: text) }
        }
        return .live(env: env, user: user)
    }

    /// As written.
    public var description: String {
        switch self {
        case let .file(path): return path
        case let .live(env, user): return [env.map { "env:" + $0 }, user.map { "user:" + $0 }].compactMap { $0 }.joined(separator: "/")
        }
    }

    /// Another environment read as `user` when it names no user of its own (`env:NAME` alone would
    /// read that environment's configured user).
    public func defaultingUser(_ user: String) -> CompareSide {
        if case let .live(env?, nil) = self { return .live(env: env, user: user) }
        return self
    }
}
