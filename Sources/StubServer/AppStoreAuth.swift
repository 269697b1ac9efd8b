import Crypto
import Foundation
import StubCore

/// The App Store Server API's bearer tokens, checked as Apple checks them: a compact JWS whose header
/// says `alg` ES256 and `kid` the API key's id (`typ`, when there, JWT); whose payload says `iss` the
/// issuer, `aud` appstoreconnect-v1, `bid` the app, an `iat` not more than 60 s ahead, an `exp` still to
/// come and at most 3600 s after `iat`; signed (raw r‖s) by the API key. Anything else is a 401 with an
/// empty body; the reason goes to the request log only, and the token nowhere.
enum AppStoreAuth {
    /// Nil when the `Authorization` header holds a token Apple would take at `now` (UNIX seconds); else
    /// why not, in words that never quote the token.
    static func refusal(header: String?, key: P256.Signing.PublicKey, now: Double) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return "no bearer token" }
        let parts = header.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let head = object(parts[0]), let claims = object(parts[1]) else { return "the token is not a compact JWS of JSON objects" }
        guard head["alg"]?.stringValue == "ES256" else { return "token's alg is not ES256" }
        guard head["kid"]?.stringValue == AppStoreAccount.keyID else { return "token's kid is not \(AppStoreAccount.keyID)" }
        if let typ = head["typ"], typ.stringValue != "JWT" { return "token's typ is not JWT" }
        guard let raw = Base64URL.decode(parts[2]), raw.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw),
              key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return "token's signature does not verify with key \(AppStoreAccount.keyID)" }
        guard claims["iss"]?.stringValue == AppStoreAccount.issuerID else { return "token's iss is not \(AppStoreAccount.issuerID)" }
        guard claims["aud"]?.stringValue == AppStoreAccount.audience else { return "token's aud is not \(AppStoreAccount.audience)" }
        guard claims["bid"]?.stringValue == AppStoreAccount.bundleID else { return "token's bid is not \(AppStoreAccount.bundleID)" }
        guard let iat = claims["iat"]?.doubleValue, let exp = claims["exp"]?.doubleValue else { return "token has no iat or exp" }
        guard iat <= now + 60 else { return "token's iat is more than 60 s ahead of the stand-in's clock" }
        guard exp > now else { return "token expired" }
        guard exp - iat <= 3600 else { return "token's exp is more than 3600 s after its iat" }
        return nil
    }

    /// A part of the token as a JSON object; nil when it is not one.
    static func object(_ part: Substring) -> JSON? {
        guard let data = Base64URL.decode(part), let value = try? JSONDecoder().decode(JSON.self, from: data), case .object = value else { return nil }
        return value
    }
}
