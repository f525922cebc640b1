"""Published figures of GPUs: boards, architectures' limits, instruction issue rates."""
