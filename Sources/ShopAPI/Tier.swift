/// What kind of environment a shop is: the stand-in or a developer's own (`local`), the QA
/// environment (`staging`), or a real shop (`production`). The header's badge says it (LOCAL green,
/// STAGING yellow, ⚠ NAME red), and a production environment is read-only unless its config says
/// `read_only = false`. Set by `tier = "…"`; without it, an environment named `local` or `staging` is
/// that tier and any other is treated as a real one.
public enum Tier: String, Sendable, Equatable, CaseIterable {
    case local, staging, production

    /// The tier an environment of this name has when its config gives none.
    public static func named(_ environment: String) -> Tier {
        Tier(rawValue: environment.lowercased()) ?? .production
    }
}
