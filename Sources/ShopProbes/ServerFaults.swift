import ShopProxy
import ShopViewModels

/// `F` in the TUI: faults put into the running proxy's (`clear` takes them all away).
public struct ServerFaults: ProxyFaultPutter {
    let faults: ProxyFaults

    public init(faults: ProxyFaults) { self.faults = faults }

    public func put(_ spec: String) async -> FaultPutResult {
        if spec.trimmingCharacters(in: .whitespaces).lowercased() == FaultChoice.clear { return .cleared(faults.clear()) }
        do {
            let fault = try ProxyFault.parse(spec)
            _ = faults.add(fault)
            return .put(fault.summary)
        } catch let error as ProxyFaultError {
            return .failed(error.description)
        } catch {
            return .failed("it is not a fault the proxy knows")
        }
    }
}
