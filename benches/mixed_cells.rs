//! `cargo bench --bench mixed_cells`: the mixed-cell enumeration of a system's supports
//! (random lifting, seed 1, one thread), checked against the known mixed volume before it
//! is timed (`pathtrack bench cells` compares with gfan and PHCpack).

use pathtrack::bench::{system_by_name, timing::Cases};
use pathtrack::start::polyhedral::{mixed_volume_of, Supports};
use pathtrack::Error;

fn main() -> pathtrack::Result<()> {
    let cases = Cases::from_args(
        "mixed cells: mixed volume by the enumeration of the mixed cells, one thread",
    );
    // The known mixed volumes: cyclic-7 924, cyclic-8 2560, noon-n 3^n − 2n.
    for (name, volume) in [("cyclic7", 924), ("cyclic8", 2560), ("noon7", 2173)] {
        let s = Supports::from_system(&system_by_name(name)?)?;
        let found = mixed_volume_of(&s, 1, 1)?.mixed_volume;
        if found != volume {
            return Err(Error::Internal(format!(
                "{name}: mixed volume {found}, known {volume}"
            )));
        }
        cases.run(&format!("mixed cells {name}"), || {
            mixed_volume_of(&s, 1, 1)?;
            Ok(())
        })?;
    }
    Ok(())
}
