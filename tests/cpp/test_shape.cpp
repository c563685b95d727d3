// cl::Shape (core/shape.h): std::vector<int64_t>'s behaviour, with up to kInline values kept
// in the object and more on the heap.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/shape.h"

namespace {

using cl::Shape;

std::vector<int64_t> vec(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

TEST(Shape, ConstructorsAsVector) {
  EXPECT_TRUE(Shape().empty());
  EXPECT_EQ(vec(Shape(3)), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(vec(Shape(2, 7)), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(vec(Shape{2}), (std::vector<int64_t>{2}));  // braces: the values
  int64_t raw[] = {4, 5, 6};
  EXPECT_EQ(vec(Shape(raw, raw + 3)), (std::vector<int64_t>{4, 5, 6}));
  std::vector<int> ints{1, 2};
  EXPECT_EQ(vec(Shape(ints.begin(), ints.end())), (std::vector<int64_t>{1, 2}));
}

TEST(Shape, GrowsPastInlineAndKeepsValues) {
  Shape s;
  for (int64_t i = 0; i < 40; ++i) s.push_back(i);
  ASSERT_EQ(s.size(), 40u);
  EXPECT_GE(s.capacity(), 40u);
  for (int64_t i = 0; i < 40; ++i) EXPECT_EQ(s[size_t(i)], i);
  EXPECT_EQ(s.front(), 0);
  EXPECT_EQ(s.back(), 39);
  s.resize(3);
  EXPECT_EQ(vec(s), (std::vector<int64_t>{0, 1, 2}));
  s.resize(5, 9);
  EXPECT_EQ(vec(s), (std::vector<int64_t>{0, 1, 2, 9, 9}));
  s.pop_back();
  s.assign(2, 4);
  EXPECT_EQ(vec(s), (std::vector<int64_t>{4, 4}));
}

TEST(Shape, CopyAndMoveInlineAndHeap) {
  for (size_t n : {size_t(0), size_t(3), Shape::kInline, Shape::kInline + 1, size_t(64)}) {
    Shape a(n);
    for (size_t i = 0; i < n; ++i) a[i] = int64_t(i * 3 + 1);
    Shape b = a;
    EXPECT_EQ(a, b);
    Shape c = std::move(b);
    EXPECT_EQ(a, c);
    EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    b.push_back(5);          // and usable
    EXPECT_EQ(vec(b), (std::vector<int64_t>{5}));
    Shape d{1, 2};
    d = c;
    EXPECT_EQ(d, a);
    Shape e(100);
    e = std::move(c);
    EXPECT_EQ(e, a);
    e = e;  // self-assignment keeps the values
    EXPECT_EQ(e, a);
  }
}

TEST(Shape, InsertEraseAsVector) {
  for (size_t n : {size_t(2), Shape::kInline, size_t(20)}) {
    Shape s(n);
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; ++i) s[i] = v[i] = int64_t(i);
    s.insert(s.begin() + 1, 42);
    v.insert(v.begin() + 1, 42);
    s.insert(s.end(), 7);
    v.insert(v.end(), 7);
    s.insert(s.begin(), s.begin() + 1, s.begin() + 3);  // a range from itself
    std::vector<int64_t> part(v.begin() + 1, v.begin() + 3);
    v.insert(v.begin(), part.begin(), part.end());
    EXPECT_EQ(vec(s), v);
    s.erase(s.begin() + 2);
    v.erase(v.begin() + 2);
    s.erase(s.begin(), s.begin() + 2);
    v.erase(v.begin(), v.begin() + 2);
    EXPECT_EQ(vec(s), v);
    std::reverse(s.begin(), s.end());
    EXPECT_EQ(std::vector<int64_t>(s.rbegin(), s.rend()), v);
  }
}

TEST(Shape, Equality) {
  EXPECT_EQ(Shape({1, 2}), Shape({1, 2}));
  EXPECT_NE(Shape({1, 2}), Shape({1, 2, 3}));
  EXPECT_NE(Shape({1, 2}), Shape({1, 3}));
  EXPECT_EQ(Shape(), Shape(0));
}

}  // namespace
