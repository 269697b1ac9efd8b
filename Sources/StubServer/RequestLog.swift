import Foundation

/// One line per request on stderr: method, path (query values named like a token are masked),
/// status, milliseconds, request id, the faults that hit it, and why when a route says (an App Store
/// 401: which rule the token broke). Headers, and so tokens, are never printed.
enum RequestLog {
    static func line(method: String, path: String, query: String?, outcome: String, millis: Int, requestID: String, faults: [String],
                     reason: String? = nil) -> String {
        var target = path
        if let query, !query.isEmpty { target += "?" + redact(query: query) }
        var line = "\(method) \(target) \(outcome) \(millis)ms \(requestID)"
        if !faults.isEmpty { line += " fault=" + faults.joined(separator: "+") }
        if let reason { line += " " + reason }
        return line
    }

    static func redact(query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let eq = pair.firstIndex(of: "=") else { return String(pair) }
            let key = pair[..<eq].lowercased()
            let secret = ["token", "secret", "password", "authorization"].contains { key.contains($0) }
            return secret ? pair[..<eq] + "=***" : String(pair)
        }.joined(separator: "&")
    }

    static func write(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
