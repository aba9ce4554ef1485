print("jwsforge: not built yet")
