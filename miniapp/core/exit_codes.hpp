#pragma once

namespace miniapp::exit_code {
inline constexpr int kAllVerified = 0;        // every measurement ran and verified
inline constexpr int kVerificationFailed = 1; // at least one result was wrong
inline constexpr int kBadInput = 2;           // bad deck or command line; nothing ran
inline constexpr int kRuntimeError = 3;       // allocation failure, device error, unwritable output
inline constexpr int kInterruptedBase = 128;  // + signal number (SIGTERM: 143), finished results kept
}  // namespace miniapp::exit_code
