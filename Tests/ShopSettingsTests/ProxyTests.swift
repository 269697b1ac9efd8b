import ShopSettings
import Testing

@Suite struct ProxyTests {
    func resolve(_ base: String, config: String? = nil, _ env: [String: String]) -> String {
        switch ProxyResolution.resolve(baseURL: base, configured: config, environment: env) {
        case let .success(o): return (o.proxy?.shown ?? "direct") + " · " + o.source
        case let .failure(p): return "error: " + p.message
        }
    }

    @Test func theOrderIsNoProxyThenConfigThenSchemeVariableThenAll() {
        let env = ["HTTPS_PROXY": "http://p1:3128", "http_proxy": "p2:8080", "ALL_PROXY": "http://p3", "NO_PROXY": "internal.example"]
        #expect(resolve("https://staging.example.com", env) == "http://p1:3128 · environment variable HTTPS_PROXY")
        #expect(resolve("http://staging.example.com", env) == "http://p2:8080 · environment variable http_proxy")
        #expect(resolve("https://staging.example.com", ["ALL_PROXY": "http://p3"]) == "http://p3:1080 · environment variable ALL_PROXY")
        #expect(resolve("https://staging.example.com", config: "http://c:1", env) == "http://c:1 · config file")
        #expect(resolve("https://staging.example.com", config: "", env) == "direct · direct: proxy = \"\" in the config file")
        #expect(resolve("https://api.internal.example", config: "http://c:1", env) == "direct · direct: NO_PROXY names api.internal.example")
        #expect(resolve("https://x.example", ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:1"]) == "http://lower:1 · environment variable https_proxy")
    }

    @Test func noProxyFollowsCurl() {
        #expect(ProxyResolution.bypasses(host: "a.example.com", noProxy: "example.com"))
        #expect(ProxyResolution.bypasses(host: "example.com", noProxy: " .example.com "))
        #expect(!ProxyResolution.bypasses(host: "badexample.com", noProxy: "example.com"))
        #expect(ProxyResolution.bypasses(host: "anything", noProxy: "*"))
        #expect(!ProxyResolution.bypasses(host: "anything", noProxy: "localhost,*"))  // * counts only alone
        #expect(!ProxyResolution.bypasses(host: "10.0.0.1", noProxy: "0.0.1"))  // an address is no domain
        #expect(ProxyResolution.bypasses(host: "staging.example.com.", noProxy: "example.com."))
        #expect(ProxyResolution.bypasses(host: "10.1.2.3", noProxy: "localhost,10.0.0.0/8"))
        #expect(!ProxyResolution.bypasses(host: "11.1.2.3", noProxy: "10.0.0.0/8"))
        #expect(ProxyResolution.bypasses(host: "staging.local", noProxy: "staging.local:8443"))
        #expect(ProxyResolution.bypasses(host: "::1", noProxy: "[::1]"))
    }

    @Test func credentialsAreKeptButNeverShownAndOtherSchemesAreRefused() {
        let p = ProxySetting.parse("http://qa%40corp:p%3Ass@proxy.corp:3128")
        #expect(p?.username == "qa@corp" && p?.password == "p:ss" && p?.shown == "http://***@proxy.corp:3128")
        #expect(ProxySetting.parse("https://proxy:443") == nil && ProxySetting.parse("socks5://p:1080") == nil)
        #expect(resolve("http://x", ["HTTP_PROXY": "socks5://u:secret@p:1"]) == "error: HTTP_PROXY is not an http://host:port proxy (https:// and socks proxies are not supported)")
    }
}
