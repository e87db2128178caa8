//! Named constants inside `#[hdl_gen]` kernels.
//!
//! A kernel cannot name a Rust `const` (rust-hdl turns the path into a
//! signal name), so a block that compares with a named value holds it as a
//! field: a [`Param`] (or a [`TableId`](crate::contract_rows::TableId)),
//! emitted as a Verilog `localparam`. `Default` gives the value from the
//! type, so blocks keep `#[derive(Default)]`:
//!
//! ```ignore
//! k_sack: Param<KIND_BITS, { kind::SACK }>,
//! ...
//! if self.kind.q.val() == self.k_sack.val() { ... }
//! ```

use rust_hdl::prelude::*;

/// The constant `V`, `W` bits wide, as a block field (a Verilog localparam).
#[derive(Clone, Copy, Debug)]
pub struct Param<const W: usize, const V: u64>(Constant<Bits<W>>);

impl<const W: usize, const V: u64> Default for Param<W, V> {
    fn default() -> Self {
        Param(Constant::new(V.into()))
    }
}

/// `val()` and the `Logic` / `Block` impls of a newtype over one
/// `Constant<Bits<$bits>>`: nothing to update or connect, the constant is
/// visited under the field's name.
macro_rules! constant_block {
    ($name:ident < $(const $g:ident : $t:ty),+ >, $bits:expr) => {
        impl<$(const $g: $t),+> $name<$($g),+> {
            /// The value, for comparisons in a kernel.
            pub fn val(&self) -> rust_hdl::prelude::Bits<{ $bits }> {
                self.0.val()
            }
        }

        impl<$(const $g: $t),+> rust_hdl::prelude::Logic for $name<$($g),+> {
            fn update(&mut self) {}
        }

        impl<$(const $g: $t),+> rust_hdl::prelude::Block for $name<$($g),+> {
            fn connect_all(&mut self) {}

            fn update_all(&mut self) {}

            fn has_changed(&self) -> bool {
                false
            }

            fn accept(&self, name: &str, probe: &mut dyn rust_hdl::prelude::Probe) {
                self.0.accept(name, probe);
            }
        }
    };
}
pub(crate) use constant_block;

constant_block!(Param<const W: usize, const V: u64>, W);
