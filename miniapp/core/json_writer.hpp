#pragma once
// A small streaming JSON writer: objects, arrays, strings, numbers (non-finite as null).

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace miniapp {

class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  JsonWriter& key(const std::string& k) {
    separator();
    write_string(k);
    out_ << ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(const std::string& v) {
    separator();
    write_string(v);
    return *this;
  }
  JsonWriter& value(const char* v) { return value(std::string(v)); }
  JsonWriter& value(bool v) {
    separator();
    out_ << (v ? "true" : "false");
    return *this;
  }
  JsonWriter& value(double v) {
    separator();
    if (std::isfinite(v)) {
      std::ostringstream s;
      s.precision(17);
      s << v;
      out_ << s.str();
    } else {
      out_ << "null";
    }
    return *this;
  }
  JsonWriter& value(std::int64_t v) {
    separator();
    out_ << v;
    return *this;
  }
  JsonWriter& value(std::uint64_t v) {
    separator();
    out_ << v;
    return *this;
  }
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(const std::optional<double>& v) { return v ? value(*v) : null(); }
  JsonWriter& null() {
    separator();
    out_ << "null";
    return *this;
  }
  template <class T>
  JsonWriter& field(const std::string& k, const T& v) {
    key(k);
    return value(v);
  }
  JsonWriter& array(const std::string& k, const std::vector<double>& values) {
    key(k).begin_array();
    for (double v : values) value(v);
    return end_array();
  }
  JsonWriter& array(const std::string& k, const std::vector<std::string>& values) {
    key(k).begin_array();
    for (const std::string& v : values) value(v);
    return end_array();
  }

  std::string str() const { return out_.str(); }

 private:
  JsonWriter& open(char c) {
    separator();
    out_ << c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ << c;
    return *this;
  }
  void newline() {
    out_ << '\n';
    for (std::size_t i = 0; i < first_.size(); ++i) out_ << "  ";
  }
  void separator() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ << ',';
    first_.back() = false;
    newline();
  }
  void write_string(const std::string& s) {
    out_ << '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ << "\\\""; break;
        case '\\': out_ << "\\\\"; break;
        case '\n': out_ << "\\n"; break;
        case '\r': out_ << "\\r"; break;
        case '\t': out_ << "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ << buf;
          } else {
            out_ << c;
          }
      }
    }
    out_ << '"';
  }

  std::ostringstream out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace miniapp
