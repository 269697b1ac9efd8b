import JSONTokens
import NIOCore

/// `/_proxy/faults` on the proxy's own address, as the stand-in's `/_stub/faults`: `GET` lists the faults
/// in force, `POST` adds one (a JSON object) or several (an array) and answers 201 with them, `DELETE`
/// removes them all, `DELETE /_proxy/faults/ID` one. Only from this machine; never forwarded.
enum FaultControl {
    static let root = "/_proxy/faults"

    static func owns(_ path: String) -> Bool {
        let plain = path.prefix { $0 != "?" }
        return plain == root || plain.hasPrefix(root + "/")
    }

    /// Whether a peer may change the faults: this machine's loopback only (an IPv4 one mapped into IPv6
    /// too), whatever password the proxy has.
    static func admits(peer: SocketAddress?) -> Bool {
        guard let ip = peer?.ipAddress?.lowercased() else { return false }
        return HostPort.isLoopback(ip.hasPrefix("::ffff:") ? String(ip.dropFirst(7)) : ip)
    }

    /// Why a request that changes the faults is refused as one a web page may have sent, if it is: it
    /// names an `Origin`, or a POST's body is not labelled `application/json`.
    static func crossSiteRefusal(method: String, origin: String?, contentType: String?) -> String? {
        guard method != "GET", method != "HEAD" else { return nil }
        if origin != nil { return "the proxy's faults are not changed from a web page (the request names an Origin)" }
        if method == "POST", contentType.map({ $0.lowercased().hasPrefix("application/json") }) != true {
            return "a fault is posted as application/json (Content-Type)"
        }
        return nil
    }

    static func answer(method: String, path: String, body: [UInt8], faults: ProxyFaults) -> WireResponse {
        let plain = String(path.prefix { $0 != "?" })
        if plain == root {
            switch method {
            case "GET", "HEAD":
                var response = listing(faults.list(), status: 200)
                response.bodiless = method == "HEAD"
                return response
            case "POST": return add(body, to: faults)
            case "DELETE": return json(200, ["cleared": .int(faults.clear())])
            default: return WireResponse.own(405, "\(root) takes GET, POST and DELETE", close: false)
            }
        }
        let id = String(plain.dropFirst(root.count + 1))
        guard method == "DELETE" else { return WireResponse.own(405, "\(root)/ID takes DELETE", close: false) }
        guard let number = Int(id), faults.remove(id: number) else { return error(404, "not_found", "no fault \(id)") }
        return json(200, ["removed": .int(number)])
    }

    private static func add(_ body: [UInt8], to faults: ProxyFaults) -> WireResponse {
        guard let value = JSONValue.parse(body) else {
            return error(400, "invalid_fault", "a fault is a JSON object (or an array of them), such as {\"kind\":\"lose_answer\",\"count\":1}")
        }
        let added: [ProxyFault]
        do {
            if case let .array(items) = value {
                added = try items.map(ProxyFault.from(json:))
            } else {
                added = [try ProxyFault.from(json: value)]
            }
        } catch {
            return Self.error(400, "invalid_fault", (error as? ProxyFaultError)?.description ?? "the fault could not be read")
        }
        return listing(added.map(faults.added), status: 201)
    }

    private static func listing(_ faults: [ActiveProxyFault], status: Int) -> WireResponse {
        json(status, ["faults": .array(faults.map { .object($0.json) })])
    }

    /// An error as the contract's `Error`: `{"code":…,"message":…}`.
    private static func error(_ status: Int, _ code: String, _ message: String) -> WireResponse {
        json(status, ["code": .string(code), "message": .string(message)])
    }

    private static func json(_ status: Int, _ object: JSONObject) -> WireResponse {
        var writer = JSONWriter()
        writer.value(.object(object))
        return WireResponse(status: status, fields: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body: writer.bytes + [10])
    }
}
