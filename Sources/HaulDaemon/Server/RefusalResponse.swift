import Hummingbird
import NIOCore

/// Answers that refuse a request and then end its connection.
///
/// Closing at once could make the kernel reset the connection while the client is still
/// sending, and the client would see the reset instead of the answer. So, once the answer is
/// written, only the daemon's sending side is shut (the client reads the answer, then the end
/// of the stream); what the client still sends is read and dropped, and the connection is
/// closed for good after `lingerTime` whatever it does.
enum RefusalResponse {
    static let lingerTime = TimeAmount.seconds(2)

    /// 413 with a JSON-RPC error object (id null: the request was never read).
    static func tooLarge(limit: Int, channel: any Channel) -> Response {
        let message = "request too large: the daemon accepts at most \(limit) bytes"
        let json = #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"\#(message)"}}"#
        return closing(status: .contentTooLarge, json: json, channel: channel)
    }

    /// 403 for a unix-socket peer that is another user.
    static func forbidden(channel: any Channel) -> Response {
        let json = #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"this daemon belongs to another user"}}"#
        return closing(status: .forbidden, json: json, channel: channel)
    }

    private static func closing(status: HTTPResponse.Status, json: String, channel: any Channel) -> Response {
        let buffer = ByteBuffer(string: json)
        let headers: HTTPFields = [.contentType: "application/json", .connection: "close"]
        return Response(status: status, headers: headers, body: ResponseBody(contentLength: buffer.readableBytes) { writer in
            try await writer.write(buffer)
            try await writer.finish(nil)
            // The answer's parts are queued on the channel before this close request, and a
            // half-close waits for queued writes.
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: lingerTime) { channel.close(promise: nil) }
        })
    }
}
