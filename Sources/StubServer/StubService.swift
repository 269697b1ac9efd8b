import Foundation
import Hummingbird
import StubCore

/// Everything `reiterate-stub` is configured with.
public struct StubSettings: Sendable {
    public var host: String
    public var port: Int
    public var shop: ShopConfig
    public var faults: [FaultSpec]
    /// Print one line per request on stderr.
    public var requestLog: Bool
    /// Serve HTTPS with this certificate chain and key (PEM files); plain HTTP without.
    public var tls: (certificate: String, key: String)?

    public init(host: String = "127.0.0.1", port: Int = 8080, shop: ShopConfig = ShopConfig(), faults: [FaultSpec] = [], requestLog: Bool = true,
                tls: (certificate: String, key: String)? = nil) {
        self.host = host
        self.port = port
        self.shop = shop
        self.faults = faults
        self.requestLog = requestLog
        self.tls = tls
    }
}

/// The stand-in's state and its router (`makeRouter()`): the shop API of the contract, the App Store
/// Server API's subset, the `/_stub` control endpoints, and fault injection, request ids, recording and
/// the request log as middleware.
public struct StubService: Sendable {
    public let store: ShopStore
    public let faults: FaultRegistry
    /// The App Store's chain and API key, minted at start (`writeFiles` for `--appstore-dir`).
    public let appStore: AppStoreIdentity
    let requestLog: Bool
    /// `purchase_cheer` verifies with the App Store side (`ShopConfig.appStoreVerify`).
    let appStoreVerify: Bool

    /// When set, every request the stand-in receives is kept there (tests read what clients really sent).
    public let recorder: RequestRecorder?

    /// Throws only if the App Store's certificates cannot be minted.
    public init(settings: StubSettings, recorder: RequestRecorder? = nil) throws {
        store = ShopStore(config: settings.shop, now: Date().timeIntervalSince1970)
        faults = FaultRegistry(seed: settings.shop.seed, initial: settings.faults)
        appStore = try AppStoreIdentity()
        requestLog = settings.requestLog
        appStoreVerify = settings.shop.appStoreVerify
        self.recorder = recorder
    }
}
