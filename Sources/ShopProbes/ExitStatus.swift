import ShopAPI
import ShopViewModels

/// Exit statuses (sysexits.h where one fits).
public enum ExitStatus: Int32, Sendable {
    case serverError = 1       // the server answered with an error, or sign-in expired
    case usage = 64            // EX_USAGE: a command refused as given (spend without --yes)
    case dataError = 65        // EX_DATAERR: the answer could not be read
    case unavailable = 69      // EX_UNAVAILABLE: no answer (refused, DNS, TLS, timeout, offline)
    case software = 70         // EX_SOFTWARE: a failure of this program
    case tempFail = 75         // EX_TEMPFAIL: the server failed; a cached value was printed
    case config = 78           // EX_CONFIG: a setting is wrong

    /// A write's status (`spend`, `buy`), from its one outcome: 0 when applied (65 under `--strict`
    /// when a check failed or an answer deviated from the contract), 1 when the server refused it,
    /// 69 when no answer came and it was not applied or it is not known whether.
    public static func of(_ outcome: WriteOutcome, error: ShopAPIError?, strict: Bool, findings: Int) -> Int32 {
        // The server took what the shop must refuse: a finding whatever --strict says.
        if outcome.acceptedRefusable != nil { return dataError.rawValue }
        // A 2xx with an error body: an answer that breaks the contract's status, never "no answer".
        if case let .undecodable(problem, _, _)? = error, case .errorBody = problem.reason { return dataError.rawValue }
        // A failed check of the write is a finding whatever --strict says (scripts rely on it).
        if !outcome.failed.isEmpty { return dataError.rawValue }
        if outcome.applied == .yes {  // an answer lost but the write found applied counts as done
            return strict && findings > 0 ? dataError.rawValue : 0
        }
        switch outcome.answer {
        case .unanswered: return unavailable.rawValue
        case .refused, .accepted: return (error.map(of) ?? .software).rawValue  // refused: 1, or the setting or fault at fault
        }
    }

    public static func of(_ error: ShopAPIError) -> ExitStatus {
        switch error.category {
        case .httpStatus, .signIn, .cancelled: return .serverError
        case .notJSON, .undecodable: return .dataError
        case .offline, .refused, .dns, .tls, .timeout, .cutShort, .network: return .unavailable
        case .configuration: return .config
        case .internalFailure: return .software
        }
    }
}
