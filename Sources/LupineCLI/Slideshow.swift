/// The document LupineTestServer serves at `/json`, as a user's model type would decode it.
struct Slideshow: Decodable, Sendable {
    /// One slide of the show.
    struct Slide: Decodable, Sendable {
        let title: String
        let type: String
        let items: [String]?
    }

    let title: String
    let author: String
    let date: String
    let slides: [Slide]

    private enum CodingKeys: String, CodingKey {
        case slideshow
    }

    private enum ShowKeys: String, CodingKey {
        case title, author, date, slides
    }

    // The server wraps the show in a top-level "slideshow" object.
    init(from decoder: any Decoder) throws {
        let show = try decoder.container(keyedBy: CodingKeys.self).nestedContainer(keyedBy: ShowKeys.self, forKey: .slideshow)
        title = try show.decode(String.self, forKey: .title)
        author = try show.decode(String.self, forKey: .author)
        date = try show.decode(String.self, forKey: .date)
        slides = try show.decode([Slide].self, forKey: .slides)
    }
}
