@testable import Lupine
import Testing

/// The list behind a request's URLRequests and handlers keeps its order whether it holds one
/// element or many.
@Suite struct SmallListTests {
    @Test func keepsOrderAcrossTheFirstElementAndTheRest() {
        var list = SmallList<String>()
        #expect(list.isEmpty && list.count == 0 && list.last == nil && list.array.isEmpty)
        list.append("a")
        #expect(list.count == 1 && list.last == "a" && list[0] == "a" && list.array == ["a"])
        list.append("b")
        list.append("c")
        #expect(list.count == 3 && list.last == "c" && list[1] == "b" && list[2] == "c")
        var seen: [String] = []
        list.forEach { seen.append($0) }
        #expect(seen == ["a", "b", "c"] && list.array == seen)
    }

    @Test func removesFromTheEnd() {
        var list = SmallList<Int>()
        list.append(1)
        list.append(2)
        list.removeLast()
        #expect(list.array == [1] && list.last == 1)
        list.removeLast()
        #expect(list.isEmpty && list.last == nil)
        list.append(3)
        list.append(4)
        list.removeAll()
        #expect(list.isEmpty && list.count == 0)
    }

    /// The queue of a request's exchange ends taken in order, the first element refilled from the rest.
    @Test func removesFromTheFrontInOrder() {
        var list = SmallList<Int>()
        #expect(list.removeFirst() == nil)
        list.append(1)
        list.append(2)
        list.append(3)
        #expect(list.removeFirst() == 1)
        #expect(list.array == [2, 3] && list.count == 2)
        list.append(4)
        #expect(list.removeFirst() == 2 && list.removeFirst() == 3 && list.removeFirst() == 4)
        #expect(list.isEmpty && list.removeFirst() == nil)
    }
}
