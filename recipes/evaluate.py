from st_contrastive.recipes.evaluate import main

if __name__ == "__main__":
    main()
