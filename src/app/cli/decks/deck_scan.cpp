// The nesting scan of deck text (see deck_scan.hpp). Iterative: its own stack is a vector.
#include "cli/decks/deck_scan.hpp"

#include <vector>

#include "core/throw.hpp"

namespace tessera::app {

namespace {

bool is_bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

class Scanner {
public:
  Scanner(std::string_view text, const std::string& source, int limit)
      : t_(text), source_(source), limit_(limit) {}

  // Statements: blank lines, comments, [table] / [[array]] headers and key = value lines.
  void run() {
    while (true) {
      skip_blank(true);
      if (at_end())
        return;
      const char c = t_[i_];
      if (c == '[') {
        ++i_;
        int extra = 0;
        if (peek() == '[') { // [[array of tables]]: the array is one level more
          ++i_;
          extra = 1;
        }
        const int parts = key(extra);
        if (parts < 0)
          return;
        header_ = parts + extra;
      } else {
        const int parts = key(header_);
        if (parts < 0)
          return;
        skip_blank(false);
        if (peek() != '=')
          return;
        ++i_;
        if (!value(header_ + parts))
          return;
      }
      skip_to_line_end();
    }
  }

private:
  struct Frame {
    char open; // '[' array or '{' inline table
    int depth; // of the values inside
  };

  bool at_end() const noexcept { return i_ >= t_.size(); }
  char peek(std::size_t ahead = 0) const noexcept {
    return i_ + ahead < t_.size() ? t_[i_ + ahead] : '\0';
  }
  void need(int depth) const {
    if (depth > limit_)
      TESSERA_THROW(InputError,
                    "{}:{}: keys, tables and arrays nest more than {} levels deep here (a header "
                    "[a.b.c] is 3 levels, each enclosing array or inline table one more)",
                    source_, line_, limit_);
  }

  // Spaces and tabs; with `lines`, also newlines and comments.
  void skip_blank(bool lines) {
    while (!at_end()) {
      const char c = t_[i_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (lines && c == '\n') {
        ++line_;
        ++i_;
      } else if (lines && c == '#') {
        while (!at_end() && t_[i_] != '\n')
          ++i_;
      } else {
        return;
      }
    }
  }
  void skip_to_line_end() {
    while (!at_end() && t_[i_] != '\n')
      ++i_;
  }

  // A string of any of the four kinds starting at i_; false when it does not end.
  bool string() {
    const char q = t_[i_];
    const bool basic = q == '"';
    if (peek(1) == q && peek(2) == q) { // multi-line
      i_ += 3;
      while (!at_end()) {
        const char c = t_[i_];
        if (c == '\n')
          ++line_;
        if (basic && c == '\\') {
          i_ += 2;
          continue;
        }
        if (c == q && peek(1) == q && peek(2) == q) {
          i_ += 3;
          while (peek() == q) // up to two quotes may end the content
            ++i_;
          return true;
        }
        ++i_;
      }
      return false;
    }
    ++i_;
    while (!at_end() && t_[i_] != '\n') {
      if (basic && t_[i_] == '\\') {
        i_ += 2;
        continue;
      }
      if (t_[i_++] == q)
        return true;
    }
    return false;
  }

  // A (dotted) key at i_: its number of parts, checked against the limit from `base`; -1 when
  // it is not one.
  int key(int base) {
    int parts = 0;
    while (true) {
      skip_blank(false);
      const char c = peek();
      if (c == '"' || c == '\'') {
        if (!string())
          return -1;
      } else if (is_bare_key_char(c)) {
        while (is_bare_key_char(peek()))
          ++i_;
      } else {
        return -1;
      }
      need(base + ++parts);
      skip_blank(false);
      if (peek() != '.')
        return parts;
      ++i_;
    }
  }

  // The value after "key =", whose depth is `depth`; false on text the scan does not follow.
  bool value(int depth) {
    std::vector<Frame> stack;
    int current = depth;
    bool expect_key = false;
    while (true) {
      skip_blank(!stack.empty() && stack.back().open == '[');
      if (at_end())
        return false;
      const char c = t_[i_];
      if (expect_key) {
        if (c == '}') { // {} or a trailing comma
          ++i_;
          stack.pop_back();
        } else {
          const int parts = key(stack.back().depth);
          if (parts < 0)
            return false;
          skip_blank(false);
          if (peek() != '=')
            return false;
          ++i_;
          current = stack.back().depth + parts;
          expect_key = false;
          continue;
        }
      } else if (c == '[' || c == '{') {
        ++i_;
        need(current + 1);
        stack.push_back({c, current + 1});
        current = current + 1;
        expect_key = c == '{';
        continue;
      } else if (c == ']' && !stack.empty() && stack.back().open == '[') {
        ++i_; // an empty array or a trailing comma
        stack.pop_back();
      } else if (c == '"' || c == '\'') {
        if (!string())
          return false;
      } else {
        // A number, boolean or date (which may hold a space): up to the next delimiter.
        const std::size_t start = i_;
        while (!at_end() && t_[i_] != ',' && t_[i_] != ']' && t_[i_] != '}' && t_[i_] != '#' &&
               t_[i_] != '\n')
          ++i_;
        if (i_ == start)
          return false;
      }
      // After a value: the end, a comma, or the close of the enclosing arrays and tables.
      while (true) {
        if (stack.empty())
          return true;
        skip_blank(stack.back().open == '[');
        const char d = peek();
        if (d == ',') {
          ++i_;
          expect_key = stack.back().open == '{';
          current = stack.back().depth;
          break;
        }
        if ((d == ']' && stack.back().open == '[') || (d == '}' && stack.back().open == '{')) {
          ++i_;
          stack.pop_back();
          continue;
        }
        return false;
      }
    }
  }

  std::string_view t_;
  const std::string& source_;
  int limit_;
  std::size_t i_ = 0, line_ = 1;
  int header_ = 0;
};

} // namespace

void check_nesting(std::string_view text, const std::string& source, int limit) {
  Scanner(text, source, limit).run();
}

} // namespace tessera::app
