import Foundation

/// `aria2.getGlobalStat`: the daemon's totals, numbers as strings.
struct Aria2GlobalStat: Decodable, Sendable, Hashable {
    var downloadSpeed: Int64
    var numActive: Int
    /// Queued and paused downloads together, as aria2 counts them.
    var numWaiting: Int
    var numStopped: Int

    enum CodingKeys: String, CodingKey { case downloadSpeed, numActive, numWaiting, numStopped }

    init(downloadSpeed: Int64 = 0, numActive: Int = 0, numWaiting: Int = 0, numStopped: Int = 0) {
        self.downloadSpeed = downloadSpeed
        self.numActive = numActive
        self.numWaiting = numWaiting
        self.numStopped = numStopped
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func number(_ key: CodingKeys) throws -> Int64 {
            let text = try container.decode(String.self, forKey: key)
            guard let value = Int64(text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "'\(text)' is not a whole number")
            }
            return value
        }
        downloadSpeed = try number(.downloadSpeed)
        numActive = Int(try number(.numActive))
        numWaiting = Int(try number(.numWaiting))
        numStopped = Int(try number(.numStopped))
    }
}
