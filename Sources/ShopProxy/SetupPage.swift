import Foundation

/// What a request to the proxy itself gets (`http://HOST:PORT/` in Safari on the phone): a short page
/// on setting the phone up, the CA as PEM (`/ca.pem`) and as an iOS profile (`/ca.mobileconfig`).
/// The CA's certificate is public; its key never leaves the state folder.
enum SetupPage {
    static func answer(path: String, core: ProxyCore) -> WireResponse {
        let plain = String(path.prefix { $0 != "?" })
        switch plain {
        case "/":
            return WireResponse(status: 200, fields: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")],
                                body: Array(html(core).utf8))
        case "/ca.pem":
            return WireResponse(status: 200, fields: [("Content-Type", "application/x-pem-file"),
                                                      ("Content-Disposition", "attachment; filename=\"reiterate-shop-ca.pem\"")],
                                body: Array(core.ca.certificatePEM.utf8))
        case "/ca.mobileconfig":
            return WireResponse(status: 200, fields: [("Content-Type", "application/x-apple-aspen-config"),
                                                      ("Content-Disposition", "attachment; filename=\"reiterate-shop-ca.mobileconfig\"")],
                                body: Array(core.ca.mobileconfig().utf8))
        default:
            return WireResponse.own(404, "the proxy's own pages are /, /ca.pem and /ca.mobileconfig", close: false)
        }
    }

    static func html(_ core: ProxyCore) -> String {
        let hosts = core.configuration.interceptedHosts.map { escaped($0.description) }.joined(separator: ", ")
        let listen = escaped(core.configuration.listen.description)
        return """
        <!doctype html>
        <html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>reiterate-shop proxy</title>
        <style>body{font:16px -apple-system,system-ui,sans-serif;margin:1.5em;max-width:40em}code{word-break:break-all}</style>
        </head><body>
        <h1>reiterate-shop proxy</h1>
        <p>This proxy reads the shop's traffic (<code>\(hosts)</code>) so that QA can check it. Every other host passes through unread.</p>
        <ol>
        <li>Wi-Fi settings → this network → Configure Proxy → Manual: server and port of <code>\(listen)</code>\(core.password == nil ? "" : ", with the proxy's password").</li>
        <li><a href="/ca.mobileconfig">Install the CA profile</a> (Settings → Profile Downloaded → Install), or <a href="/ca.pem">download the certificate</a>.</li>
        <li>Settings → General → About → Certificate Trust Settings → turn on full trust for “reiterate-shop proxy CA”.</li>
        </ol>
        <p>The CA may sign only for the hosts above (name constraints): it cannot be used against any other site.</p>
        <p>SHA-256 fingerprint: <code>\(escaped(core.ca.fingerprintSHA256))</code></p>
        <p>A QA build must have certificate pinning off. StoreKit's traffic to Apple is not seen here.</p>
        </body></html>

        """
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
