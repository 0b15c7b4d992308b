print("lupine")
