// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_MEMORY_MEMORY_ACCOUNTING_HPP_
#define MSCCLPP_MEMORY_MEMORY_ACCOUNTING_HPP_

#include <atomic>
#include <cstddef>
#include <memory>

namespace mscclpp {

/// What a Context's objects hold right now (Context::memoryUsage adds the token pools). Objects that
/// allocate on a Context's behalf hold a Charge, so the figures fall when they are destroyed, even
/// after the Context itself is gone.
struct MemoryAccounting {
  std::atomic<size_t> deviceBytes{0};
  std::atomic<size_t> hostPinnedBytes{0};
  std::atomic<size_t> exportedHandles{0};

  /// Adds `amount` to one figure for the Charge's lifetime. Move-only.
  class Charge {
   public:
    Charge() = default;
    Charge(std::shared_ptr<MemoryAccounting> accounting, std::atomic<size_t> MemoryAccounting::*field, size_t amount)
        : accounting_(std::move(accounting)), field_(field), amount_(amount) {
      if (accounting_) ((*accounting_).*field_) += amount_;
    }
    Charge(Charge&& other) noexcept
        : accounting_(std::move(other.accounting_)), field_(other.field_), amount_(other.amount_) {}
    Charge& operator=(Charge&& other) noexcept {
      release();
      accounting_ = std::move(other.accounting_);
      field_ = other.field_;
      amount_ = other.amount_;
      return *this;
    }
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;
    ~Charge() { release(); }

   private:
    void release() {
      if (accounting_) ((*accounting_).*field_) -= amount_;
      accounting_.reset();
    }
    std::shared_ptr<MemoryAccounting> accounting_;
    std::atomic<size_t> MemoryAccounting::*field_ = nullptr;
    size_t amount_ = 0;
  };
};

}  // namespace mscclpp

#endif  // MSCCLPP_MEMORY_MEMORY_ACCOUNTING_HPP_
