/// Whether a method checks aria2's secret (`"token:SECRET"` as the first parameter) on TCP.
package enum RPCSecretPolicy: Sendable, Hashable {
    /// The secret is required on TCP (every method that reads or changes downloads).
    case required
    /// Anyone may call it (aria2's `system.listMethods` and `system.listNotifications`, which
    /// only name what exists).
    case notRequired
}

/// One method: its name, its secret policy and what it does.
package struct RPCMethod: Sendable {
    /// Gets the parameters without the secret and answers a result, or throws the error to
    /// answer. The origin says which transport the call came over.
    package typealias Body = @Sendable (RPCParameters, RPCOrigin) async throws(JSONRPCError) -> JSONValue

    package let name: String
    package let secret: RPCSecretPolicy
    let body: Body
}

/// The methods and notifications a JSON-RPC handler serves.
///
/// Built before the handler, from several files: `Aria2Service.register(in:)` adds aria2's
/// methods, and `haul.*` methods are registered the same way. The handler adds the `system.*`
/// methods itself. Names are listed (`system.listMethods`) in the order they were registered.
package struct RPCMethodTable: Sendable {
    private var methods: [String: RPCMethod] = [:]
    package private(set) var methodNames: [String] = []
    package private(set) var notificationNames: [String] = []

    package init() {}

    /// Adds a method. Registering a name twice is a programming error.
    package mutating func register(_ name: String, secret: RPCSecretPolicy = .required, _ body: @escaping RPCMethod.Body) {
        precondition(methods[name] == nil, "the RPC method \(name) is registered twice")
        methods[name] = RPCMethod(name: name, secret: secret, body: body)
        methodNames.append(name)
    }

    /// Declares a notification the server sends (listed by `system.listNotifications`).
    package mutating func registerNotification(_ name: String) {
        guard !notificationNames.contains(name) else { return }
        notificationNames.append(name)
    }

    package func method(named name: String) -> RPCMethod? {
        methods[name]
    }
}
