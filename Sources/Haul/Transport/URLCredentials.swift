import Foundation

/// User info in a URL (`https://user:password@host/file`), as curl and aria2 use it: sent as
/// Basic `Authorization` to that host only, never in the request line, events or messages.
enum URLCredentials {
    /// `url` without its user info, and the Authorization header its user info stands for.
    static func split(_ url: URL) -> (url: URL, authorization: HeaderField?) {
        // Most URLs carry no user info: no need to take them apart (twice per request).
        guard url.user != nil || url.password != nil else { return (url, nil) }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
              let user = components.percentEncodedUser
        else { return (url, nil) }
        let password = components.percentEncodedPassword ?? ""
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        let decoded = "\(user.removingPercentEncoding ?? user):\(password.removingPercentEncoding ?? password)"
        let header = HeaderField(name: "Authorization", value: "Basic " + Data(decoded.utf8).base64EncodedString())
        return (components.url ?? url, header)
    }

    /// `headers` with the Authorization that `url`'s user info stands for, unless they carry
    /// one already (an explicit header, or `--http-user`, wins).
    static func headers(_ headers: [HeaderField], for url: URL) -> [HeaderField] {
        guard let authorization = split(url).authorization,
              !headers.contains(where: { $0.name.lowercased() == "authorization" })
        else { return headers }
        return headers + [authorization]
    }
}
