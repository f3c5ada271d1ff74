import Foundation
import NIOCore

/// A stand-in JSON-RPC handler that lets the servers be run and tested before the real RPC
/// layer is plugged in: it answers every call with its own parameters as the result, and
/// stops the daemon on `aria2.shutdown` / `aria2.forceShutdown` (answering `"OK"`, as aria2
/// does). A body that is not JSON gets JSON-RPC's parse error; batches are answered call by
/// call; notifications (no `id`) get no answer.
package struct EchoRPCHandler: RPCRequestHandler {
    let control: DaemonControl?

    package init(control: DaemonControl? = nil) {
        self.control = control
    }

    package func respond(to body: ByteBuffer, from origin: RPCOrigin) async -> ByteBuffer? {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) else {
            return Self.encode(Self.error(id: NSNull(), code: -32700, message: "Parse error."))
        }
        if let batch = parsed as? [Any] {
            let answers = batch.compactMap(answer)
            return answers.isEmpty ? nil : Self.encode(answers)
        }
        return answer(to: parsed).map(Self.encode)
    }

    private func answer(to call: Any) -> [String: Any]? {
        guard let call = call as? [String: Any], let method = call["method"] as? String else {
            return Self.error(id: NSNull(), code: -32600, message: "Invalid Request.")
        }
        guard let id = call["id"] else { return nil }
        switch method {
        case "aria2.shutdown", "aria2.forceShutdown":
            control?.requestShutdown()
            return ["jsonrpc": "2.0", "id": id, "result": "OK"]
        default:
            return ["jsonrpc": "2.0", "id": id, "result": call["params"] ?? []]
        }
    }

    private static func error(id: Any, code: Int, message: String) -> [String: Any] {
        ["jsonrpc": "2.0", "id": id, "error": ["code": code, "message": message]]
    }

    private static func encode(_ value: Any) -> ByteBuffer {
        let data = (try? JSONSerialization.data(withJSONObject: value)) ?? Data(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error."}}"#.utf8)
        return ByteBuffer(bytes: data)
    }
}
